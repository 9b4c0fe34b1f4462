//! Parallel loops: outlined task functions run through the caller's runtime.

use super::emitter::{Dims, Emitter, View};
use super::expr::Expr;
use crate::imp::LoopNode;
use crate::index::IndexArith;
use std::collections::BTreeSet;

impl Emitter {
    /// Emits a parallel loop over `loop_dims`: the body becomes a task function of the
    /// flattened iteration index, with a context struct carrying the buffers and enclosing loop
    /// variables the body's views use.
    pub(super) fn emit_parallel_loop(
        &mut self,
        l: &LoopNode,
        loop_dims: &[usize],
        trips: &[u32],
        operand_dims: &[Dims],
        views: &[View],
    ) {
        let id = self.functions.len();
        let (task, ctx) = (format!("{}_task{id}", self.symbol), format!("{}_ctx{id}", self.symbol));
        // Reserve the slot so nested parallel loops get later numbers.
        self.functions.push(String::new());
        let buffers: BTreeSet<usize> = views.iter().map(|v| v.buffer).collect();
        let vars: BTreeSet<u32> = views.iter().flat_map(|v| v.origin.iter().flat_map(Expr::variables)).collect();

        let saved = (std::mem::take(&mut self.out), self.indent, self.stack_bytes);
        self.indent = 1;
        self.stack_bytes = 0;
        self.line(&format!("struct {ctx} *c = (struct {ctx} *)ctx;"));
        self.line("const morello_runtime *rt = c->rt;");
        self.line("(void)rt;");
        let mut fields = vec!["const morello_runtime *rt;".to_owned()];
        let mut init = vec![".rt = rt".to_owned()];
        for &b in &buffers {
            let (name, pointer) = (self.buffers[b].name.clone(), self.buffers[b].pointer.clone());
            fields.push(format!("{pointer}{name};"));
            init.push(format!(".{name} = {name}"));
            self.line(&format!("{pointer}restrict {name} = c->{name};"));
            // Captured for the body's views; a body that ends up not using one must still compile
            // under -Wunused.
            self.line(&format!("(void){name};"));
        }
        for v in &vars {
            fields.push(format!("int64_t i{v};"));
            init.push(format!(".i{v} = i{v}"));
            self.line(&format!("const int64_t i{v} = c->i{v};"));
            self.line(&format!("(void)i{v};"));
        }
        self.line("int64_t rest = index;");
        let mut offsets: Vec<Expr> = vec![Expr::constant(0); trips.len()];
        for &d in loop_dims.iter().rev() {
            let var = self.fresh_var();
            self.line(&format!("const int64_t i{var} = rest % {};", trips[d]));
            self.line(&format!("rest /= {};", trips[d]));
            offsets[d] = Expr::var(var, u64::from(trips[d]) - 1).mul_const(u64::from(l.tile[d]));
        }
        self.line("(void)rest;");
        let tiled = self.shift_views(views, operand_dims, &offsets, &l.body.spec);
        self.emit(&l.body, &tiled);
        let body = std::mem::replace(&mut self.out, saved.0);
        (self.indent, self.stack_bytes) = (saved.1, saved.2);

        self.functions[id] = format!(
            "struct {ctx} {{\n    {}\n}};\n\nstatic void {task}(void *ctx, int64_t index) {{\n{body}}}\n",
            fields.join("\n    ")
        );
        let total: u64 = loop_dims.iter().map(|&d| u64::from(trips[d])).product();
        self.open("{");
        self.line(&format!("struct {ctx} c{id} = {{ {} }};", init.join(", ")));
        self.line(&format!("rt->parallel_for(rt, {total}, {task}, &c{id});"));
        self.close();
    }
}
