//! The runtime every kernel receives as its last argument, `morello_runtime` in the C and
//! `morello::__private::Runtime` in Rust, described once.
//!
//! `parallel_for(rt, n, task, ctx)` must call `task(ctx, i)` exactly once for every `i` in
//! `0..n`, in any order and on any threads, and return when all calls have returned.
//! `max_threads` is informational for the runtime.
//!
//! [`RUNTIME_FIELDS`] gives each field's C declaration and its offset in pointers, so the
//! layout holds for any pointer width. The generated C declares the struct from it and asserts
//! the offsets with `_Static_assert` ([`c_declaration`]). The `kernel!` macro asserts the same
//! offsets of the Rust struct in a `const` item. A change to either side that does not match
//! fails to compile.

use std::fmt::Write;

/// One field of the runtime struct.
#[derive(Clone, Copy, Debug)]
pub struct RuntimeField {
    /// The field's name, in C and in Rust.
    pub name: &'static str,
    /// Its C declaration.
    pub c_declaration: &'static str,
    /// Its offset, in pointers.
    pub offset_in_pointers: usize,
}

/// The fields of the runtime struct, in order.
pub const RUNTIME_FIELDS: [RuntimeField; 2] = [
    RuntimeField {
        name: "parallel_for",
        c_declaration: "void (*parallel_for)(const struct morello_runtime *rt, int64_t n, \
                        void (*task)(void *ctx, int64_t i), void *ctx)",
        offset_in_pointers: 0,
    },
    RuntimeField { name: "max_threads", c_declaration: "int32_t max_threads", offset_in_pointers: 1 },
];

/// The struct's size, in pointers (the `int32_t` is padded to a pointer's alignment).
pub const RUNTIME_SIZE_IN_POINTERS: usize = 2;

/// The guarded C declaration of `morello_runtime`, with assertions of its layout.
pub fn c_declaration() -> String {
    let mut c = String::from(
        "#ifndef MORELLO_RUNTIME_DEFINED\n#define MORELLO_RUNTIME_DEFINED\n#include <stddef.h>\n\
         typedef struct morello_runtime {\n",
    );
    for field in RUNTIME_FIELDS {
        let _ = writeln!(c, "    {};", field.c_declaration);
    }
    c.push_str("} morello_runtime;\n");
    let message = "\"morello_runtime must match morello's Runtime (morello_core::codegen::runtime)\"";
    for field in RUNTIME_FIELDS {
        let _ = writeln!(
            c,
            "_Static_assert(offsetof(morello_runtime, {}) == {} * sizeof(void *), {message});",
            field.name, field.offset_in_pointers
        );
    }
    let _ = writeln!(
        c,
        "_Static_assert(sizeof(morello_runtime) == {RUNTIME_SIZE_IN_POINTERS} * sizeof(void *), {message});\n#endif"
    );
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_experiments_header_declares_the_same_struct() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../bench/experiments/morello_runtime.h");
        let header = std::fs::read_to_string(path).unwrap();
        let declaration = c_declaration();
        let start = declaration.find("typedef struct").unwrap();
        let end = declaration.find("} morello_runtime;").unwrap();
        assert!(header.contains(&declaration[start..end]), "{path} differs from:\n{declaration}");
    }
}
