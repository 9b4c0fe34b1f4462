/* What every experiment here times with: a monotonic clock in seconds, and an order of
 * doubles for qsort (medians). */
#ifndef MORELLO_EXPERIMENTS_TIMING_H
#define MORELLO_EXPERIMENTS_TIMING_H

#include <time.h>

static inline double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static inline int by_value(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

#endif
