//! The code generator's state: buffers, views and the C being written.

use super::expr::Expr;
use crate::dtype::Dtype;
use crate::imp::{AllocNode, BlockNode, Impl, ImplNode, LoopNode, Source};
use crate::index::IndexArith;
use crate::kernels::{Helper, KernelEmitter, SPARE_SLOTS};
use crate::layout::Layout;
use crate::level::Level;
use crate::primitive::{DimExpr, Direction};
use crate::shape::{Shape, coordinates, row_major_strides};
use crate::spec::Spec;
use crate::target::Target;
use crate::tensor::TensorSpec;
use crate::view::ViewMap;
use smallvec::SmallVec;
use std::collections::BTreeSet;

/// Memory buffers go on the stack while the stack bytes held along the current allocation path
/// stay within this; beyond it, they are heap-allocated, and kept for the next call
/// ([`Helper::SpareBuffers`]).
const STACK_BUDGET_BYTES: u64 = 64 * 1024;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Storage {
    /// Addressable memory: `name[index]`.
    Memory,
    /// One C scalar per element: `name_index`, row-major.
    Scalars,
    /// One C vector per register: `name_register`.
    Vectors(u32),
}

#[derive(Clone, Debug)]
pub(super) struct Buffer {
    pub name: String,
    pub storage: Storage,
    pub shape: Shape,
    pub layout: Layout,
    /// The C type of a pointer to the buffer (memory buffers).
    pub pointer: String,
    /// Bytes per element.
    pub element_bytes: u32,
    /// A kernel parameter that may stream from memory (see `prefetch::may_stream`).
    pub streamed_input: bool,
    /// Loops enclosing the point of emission that revisit the buffer: their iterations leave
    /// the tile of it that the body sees unchanged.
    pub revisiting_loops: u32,
}

#[derive(Clone, Debug)]
pub(super) struct View {
    pub buffer: usize,
    /// Buffer coordinate of the view's origin.
    pub origin: SmallVec<[Expr; 6]>,
    /// The view's shape.
    pub shape: Shape,
    /// How view coordinates map to buffer coordinates (relative to the origin).
    pub map: ViewMap,
}

impl View {
    /// The buffer coordinate of the point `shift` (in view coordinates) from this view's origin:
    /// the origin of a tile or stage that starts there.
    fn shifted_origin(&self, shift: &[Expr]) -> SmallVec<[Expr; 6]> {
        self.origin.iter().zip(self.map.apply(shift)).map(|(o, s)| o.clone().add(s)).collect()
    }

    /// [`View::shifted_origin`] at a constant point.
    fn constant_shifted_origin(&self, shift: impl IntoIterator<Item = u64>) -> SmallVec<[Expr; 6]> {
        let shift: SmallVec<[Expr; 6]> = shift.into_iter().map(Expr::constant).collect();
        self.shifted_origin(&shift)
    }
}

/// Where a new tensor's storage lives.
enum Placement {
    Registers,
    Stack(u64),
    Heap,
}

pub(super) struct Emitter {
    pub symbol: String,
    pub target: &'static Target,
    pub out: String,
    pub indent: usize,
    pub buffers: Vec<Buffer>,
    pub next_var: u32,
    pub vector_types: BTreeSet<(Dtype, u32)>,
    pub helpers: BTreeSet<Helper>,
    /// Outlined task functions (with their context structs), in order.
    pub functions: Vec<String>,
    /// Bytes of stack buffers live at the current point of emission.
    pub stack_bytes: u64,
}

/// How each dimension of an operand derives from the Spec's.
pub(super) type Dims = SmallVec<[DimExpr; 7]>;

impl Emitter {
    pub fn new(symbol: &str, target: &'static Target) -> Self {
        Emitter {
            symbol: symbol.to_owned(),
            target,
            out: String::new(),
            indent: 0,
            buffers: Vec::new(),
            next_var: 0,
            vector_types: BTreeSet::new(),
            helpers: BTreeSet::new(),
            functions: Vec::new(),
            stack_bytes: 0,
        }
    }

    /// The body of the kernel's exported function.
    pub fn emit_kernel(&mut self, imp: &Impl) -> String {
        let spec = &imp.spec;
        self.indent = 1;
        let views: Vec<View> =
            spec.operands().iter().enumerate().map(|(i, t)| self.bind_parameter(i, t, spec)).collect();
        let start = self.out.len();
        self.emit(imp, &views);
        if self.functions.is_empty() {
            self.out.insert_str(start, "    (void)rt;\n");
        }
        for (i, t) in spec.operands().iter().enumerate() {
            if t.level().is_register_file() && spec.logical().direction(i).writes() {
                self.copy_parameter(i, t, &views[i], false);
            }
        }
        std::mem::take(&mut self.out)
    }

    pub fn line(&mut self, code: &str) {
        for _ in 0..self.indent {
            self.out.push_str("    ");
        }
        self.out.push_str(code);
        self.out.push('\n');
    }

    pub fn open(&mut self, code: &str) {
        self.line(code);
        self.indent += 1;
    }

    pub fn close(&mut self) {
        self.indent -= 1;
        self.line("}");
    }

    pub fn fresh_var(&mut self) -> u32 {
        self.next_var += 1;
        self.next_var - 1
    }

    fn add_buffer(&mut self, name: String, tensor: &TensorSpec, pointer: String) -> View {
        let storage = match tensor.level() {
            Level::RF => Storage::Scalars,
            Level::VRF => Storage::Vectors(tensor.vector_size().expect("VRF tensors have a vector size")),
            Level::L1 | Level::GL => Storage::Memory,
        };
        self.buffers.push(Buffer {
            name,
            storage,
            shape: tensor.shape().into(),
            layout: tensor.layout().clone(),
            pointer,
            element_bytes: tensor.dtype().size_bytes(),
            streamed_input: false,
            revisiting_loops: 0,
        });
        View {
            buffer: self.buffers.len() - 1,
            origin: tensor.shape().iter().map(|_| Expr::constant(0)).collect(),
            shape: tensor.shape().into(),
            map: ViewMap::identity(tensor.shape().len()),
        }
    }

    /// Binds kernel parameter `i`. Register-level parameters are passed through memory and
    /// loaded into named registers on entry.
    fn bind_parameter(&mut self, i: usize, t: &TensorSpec, spec: &Spec) -> View {
        let constness = if spec.logical().direction(i) == Direction::In { "const " } else { "" };
        let pointer = format!("{constness}{} *", t.dtype().c_type());
        if !t.level().is_register_file() {
            let view = self.add_buffer(format!("p{i}"), t, pointer);
            self.buffers[view.buffer].streamed_input = super::prefetch::may_stream(t, spec.logical().direction(i));
            return view;
        }
        let name = format!("a{i}");
        self.declare_registers(&name, t);
        let view = self.add_buffer(name, t, pointer);
        self.copy_parameter(i, t, &view, true);
        view
    }

    /// Copies register-level parameter `i` between its memory (`p{i}`) and its registers.
    fn copy_parameter(&mut self, i: usize, t: &TensorSpec, view: &View, into_registers: bool) {
        for (k, reg) in self.register_names(view).into_iter().enumerate() {
            let line = match (t.vector_size(), into_registers) {
                (None, true) => format!("{reg} = p{i}[{k}];"),
                (None, false) => format!("p{i}[{k}] = {reg};"),
                (Some(lanes), into) => {
                    let (memory, bytes) = (format!("p{i} + {}", k as u32 * lanes), lanes * t.dtype().size_bytes());
                    if into {
                        format!("__builtin_memcpy(&{reg}, {memory}, {bytes});")
                    } else {
                        format!("__builtin_memcpy({memory}, &{reg}, {bytes});")
                    }
                }
            };
            self.line(&line);
        }
    }

    fn declare_registers(&mut self, name: &str, t: &TensorSpec) {
        match t.vector_size() {
            None => {
                let names: Vec<String> = (0..t.volume()).map(|k| format!("{name}_{k} = 0")).collect();
                self.line(&format!("{} {};", t.dtype().c_type(), names.join(", ")));
            }
            Some(lanes) => {
                self.vector_types.insert((t.dtype(), lanes));
                let ty = t.dtype().vector_type_name(lanes);
                let names: Vec<String> = (0..t.vector_count()).map(|k| format!("{name}_{k} = {{0}}")).collect();
                self.line(&format!("{ty} {};", names.join(", ")));
            }
        }
    }

    /// Buffer index of a view's element at view coordinate `coord`.
    pub fn buffer_index(&self, view: &View, coord: &[u64]) -> Expr {
        let buf = &self.buffers[view.buffer];
        let root = view.constant_shifted_origin(coord.iter().copied());
        match buf.storage {
            Storage::Scalars => {
                let strides = row_major_strides(&buf.shape);
                root.into_iter().zip(strides).fold(Expr::constant(0), |acc, (x, s)| acc.add(x.mul_const(s)))
            }
            Storage::Memory | Storage::Vectors(_) => buf.layout.buffer_index(&buf.shape, &root),
        }
    }

    pub fn constant_index(&self, view: &View, coord: &[u64]) -> u64 {
        self.buffer_index(view, coord)
            .as_const()
            .expect("register tensors are indexed by constants (their loops are unrolled)")
    }

    /// Names of the registers a register-level view covers, in buffer order.
    pub fn register_names(&self, view: &View) -> Vec<String> {
        let buf = &self.buffers[view.buffer];
        let mut indices: Vec<u64> = coordinates(&view.shape)
            .map(|c| {
                let c: Vec<u64> = c.iter().map(|&x| u64::from(x)).collect();
                let i = self.constant_index(view, &c);
                match buf.storage {
                    Storage::Vectors(lanes) => i / u64::from(lanes),
                    _ => i,
                }
            })
            .collect();
        indices.sort_unstable();
        indices.dedup();
        indices.into_iter().map(|i| format!("{}_{i}", buf.name)).collect()
    }

    pub fn emit(&mut self, imp: &Impl, views: &[View]) {
        match &imp.node {
            ImplNode::Spec => unreachable!("checked complete before emission"),
            ImplNode::Kernel(kernel) => {
                let mut ctx = KernelContext { em: self, views };
                kernel.emit(imp.spec.logical(), &mut ctx);
            }
            ImplNode::Block(block) => self.emit_block(block, views),
            ImplNode::Alloc(alloc) => self.emit_alloc(alloc, views),
            ImplNode::Loop(l) => self.emit_loop(&imp.spec, l, views),
        }
    }

    fn emit_block(&mut self, block: &BlockNode, views: &[View]) {
        if !block.temps.is_empty() {
            self.open("{");
        }
        let mut placements = Vec::new();
        let mut temps = Vec::new();
        for t in &block.temps {
            let name = format!("t{}", self.buffers.len());
            let (view, placement) = self.declare_tensor(&name, t);
            temps.push(view);
            placements.push((name, placement));
        }
        for (stage, binding) in block.stages.iter().zip(&block.bindings) {
            let stage_views: Vec<View> = binding
                .iter()
                .enumerate()
                .map(|(k, b)| {
                    let source = match b.source {
                        Source::Param(i) => &views[i],
                        Source::Temp(i) => &temps[i],
                    };
                    if b.view.is_none() && b.offset.is_none() {
                        return source.clone();
                    }
                    let origin = match &b.offset {
                        None => source.origin.clone(),
                        Some(offset) => source.constant_shifted_origin(offset.iter().map(|&o| u64::from(o))),
                    };
                    let map = b.view.as_ref().map_or_else(|| source.map.clone(), |view| source.map.compose(view));
                    View { buffer: source.buffer, origin, shape: stage.spec.operand(k).shape().into(), map }
                })
                .collect();
            self.emit(stage, &stage_views);
        }
        for (name, placement) in placements.into_iter().rev() {
            self.release(&name, placement);
        }
        if !block.temps.is_empty() {
            self.close();
        }
    }

    fn emit_alloc(&mut self, alloc: &AllocNode, views: &[View]) {
        if alloc.cache_miss {
            self.emit(&alloc.body, views);
            return;
        }
        self.open("{");
        let name = format!("t{}", self.buffers.len());
        let (fresh, placement) = self.declare_tensor(&name, &alloc.tensor);
        let source = &views[alloc.operand];
        if let Some(prologue) = &alloc.prologue {
            if alloc.tensor.level() == Level::VRF && self.is_stream(source) {
                self.prefetch_stream(source, &fresh, &alloc.tensor);
            }
            self.emit(prologue, &[source.clone(), fresh.clone()]);
        }
        let mut body_views = views.to_vec();
        body_views[alloc.operand] = fresh.clone();
        self.emit(&alloc.body, &body_views);
        if let Some(epilogue) = &alloc.epilogue {
            self.emit(epilogue, &[fresh.clone(), source.clone()]);
        }
        self.release(&name, placement);
        self.close();
    }

    fn release(&mut self, name: &str, placement: Placement) {
        match placement {
            Placement::Heap => self.line(&format!("morello_give_back({name}_spares, {SPARE_SLOTS}, {name});")),
            Placement::Stack(bytes) => self.stack_bytes -= bytes,
            Placement::Registers => {}
        }
    }

    fn declare_tensor(&mut self, name: &str, t: &TensorSpec) -> (View, Placement) {
        let c_type = t.dtype().c_type();
        let volume = t.layout().buffer_volume(t.shape());
        let bytes = (volume * u64::from(t.dtype().size_bytes())).next_multiple_of(64);
        let placement = if t.level().is_register_file() {
            self.declare_registers(name, t);
            Placement::Registers
        } else if self.stack_bytes + bytes > STACK_BUDGET_BYTES {
            // Kept between calls: see `Helper::SpareBuffers`.
            self.helpers.insert(Helper::SpareBuffers);
            self.line(&format!("static _Atomic(void *) {name}_spares[{SPARE_SLOTS}];"));
            self.line(&format!(
                "{c_type} *{name} = ({c_type} *)morello_take_buffer({name}_spares, {SPARE_SLOTS}, {bytes});"
            ));
            Placement::Heap
        } else {
            self.line(&format!("{c_type} {name}[{volume}] __attribute__((aligned(64)));"));
            self.stack_bytes += bytes;
            Placement::Stack(bytes)
        };
        (self.add_buffer(name.to_owned(), t, format!("{c_type} *")), placement)
    }

    fn emit_loop(&mut self, spec: &Spec, l: &LoopNode, views: &[View]) {
        let shape = spec.shape();
        let prim = spec.primitive().expect("only primitive Specs are tiled");
        let rank = shape.len();
        let trips: Vec<u32> = shape.iter().zip(&l.tile).map(|(&s, &t)| s / t).collect();
        let loop_dims: Vec<usize> = (0..rank).filter(|&d| trips[d] > 1).collect();
        let operand_dims: Vec<Dims> = (0..views.len()).map(|i| prim.operand_dims(i, rank)).collect();
        // Operands that some loop dimension does not index see the same tile again on its
        // iterations.
        let revisited: Vec<usize> = (0..views.len())
            .filter(|&i| loop_dims.iter().any(|&d| !operand_dims[i].iter().any(|e| e.uses(d as u8))))
            .map(|i| views[i].buffer)
            .collect();
        for &b in &revisited {
            self.buffers[b].revisiting_loops += 1;
        }
        if l.parallel && !loop_dims.is_empty() {
            self.emit_parallel_loop(l, &loop_dims, &trips, &operand_dims, views);
        } else {
            let unroll = views.iter().enumerate().any(|(i, v)| {
                self.buffers[v.buffer].storage != Storage::Memory
                    && operand_dims[i].iter().any(|e| loop_dims.iter().any(|&d| e.uses(d as u8)))
            });
            // Per Spec dimension, the offset of the current tile's origin.
            let mut offsets: Vec<Expr> = vec![Expr::constant(0); rank];
            self.emit_loop_level(l, &loop_dims, &trips, &operand_dims, views, unroll, &mut offsets);
        }
        for &b in &revisited {
            self.buffers[b].revisiting_loops -= 1;
        }
        for boundary in &l.boundaries {
            let offsets: Vec<Expr> = (0..rank)
                .map(|d| {
                    let at = if boundary.dims.contains(&d) { trips[d] * l.tile[d] } else { 0 };
                    Expr::constant(u64::from(at))
                })
                .collect();
            let tiled = self.shift_views(views, &operand_dims, &offsets, &boundary.body.spec);
            self.emit(&boundary.body, &tiled);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn emit_loop_level(
        &mut self,
        l: &LoopNode,
        loop_dims: &[usize],
        trips: &[u32],
        operand_dims: &[Dims],
        views: &[View],
        unroll: bool,
        offsets: &mut Vec<Expr>,
    ) {
        let Some((&d, rest)) = loop_dims.split_first() else {
            let mut tiled = self.shift_views(views, operand_dims, offsets, &l.body.spec);
            if l.spread {
                spread_tiles(trips, operand_dims, &mut tiled);
            }
            self.emit(&l.body, &tiled);
            return;
        };
        // A spread loop's tile starts at its iteration's index (`LoopNode::spread`).
        let step = if l.spread { 1 } else { u64::from(l.tile[d]) };
        if unroll {
            for i in 0..u64::from(trips[d]) {
                offsets[d] = Expr::constant(i * step);
                self.emit_loop_level(l, rest, trips, operand_dims, views, unroll, offsets);
            }
        } else {
            let id = self.fresh_var();
            self.open(&format!("for (int64_t i{id} = 0; i{id} < {}; i{id}++) {{", trips[d]));
            offsets[d] = Expr::var(id, u64::from(trips[d]) - 1).mul_const(step);
            self.emit_loop_level(l, rest, trips, operand_dims, views, unroll, offsets);
            self.close();
        }
        offsets[d] = Expr::constant(0);
    }

    /// The views of a tile whose origin is at Spec-dimension `offsets`, with the shapes of
    /// `region`'s operands.
    pub fn shift_views(&self, views: &[View], operand_dims: &[Dims], offsets: &[Expr], region: &Spec) -> Vec<View> {
        views
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let shift: SmallVec<[Expr; 6]> = operand_dims[i].iter().map(|e| e.offset(offsets)).collect();
                View {
                    buffer: v.buffer,
                    origin: v.shifted_origin(&shift),
                    shape: region.operand(i).shape().into(),
                    map: v.map.clone(),
                }
            })
            .collect()
    }
}

/// Stretches the tiles of a spread loop, `tiled` (at their origins): along the one Spec
/// dimension the loop steps through (`trips` of more than one), consecutive values of a tile
/// lie a band (`trips` values) apart.
fn spread_tiles(trips: &[u32], operand_dims: &[Dims], tiled: &mut [View]) {
    let Some(d) = trips.iter().position(|&t| t > 1) else { return };
    for (view, dims) in tiled.iter_mut().zip(operand_dims) {
        for (j, e) in dims.iter().enumerate() {
            if e.uses(d as u8) {
                view.map = view.map.compose(&ViewMap::stretched(view.shape.len(), j, trips[d]));
            }
        }
    }
}

/// What kernels see of the code generator while emitting.
struct KernelContext<'e, 'v> {
    em: &'e mut Emitter,
    views: &'v [View],
}

impl KernelEmitter for KernelContext<'_, '_> {
    fn target(&self) -> &'static Target {
        self.em.target
    }

    fn scalar(&mut self, i: usize) -> String {
        let view = &self.views[i];
        let zero = vec![0; view.shape.len()];
        let buf = &self.em.buffers[view.buffer];
        match buf.storage {
            Storage::Memory => format!("{}[{}]", buf.name, self.em.buffer_index(view, &zero)),
            Storage::Scalars => format!("{}_{}", buf.name, self.em.constant_index(view, &zero)),
            Storage::Vectors(lanes) => {
                let index = self.em.constant_index(view, &zero);
                format!("{}_{}[{}]", buf.name, index / u64::from(lanes), index % u64::from(lanes))
            }
        }
    }

    fn address(&mut self, i: usize) -> String {
        let zero = vec![0; self.views[i].shape.len()];
        self.element_address(i, &zero)
    }

    fn element_address(&mut self, i: usize, coord: &[u64]) -> String {
        let view = &self.views[i];
        let buf = &self.em.buffers[view.buffer];
        debug_assert_eq!(buf.storage, Storage::Memory);
        format!("({} + {})", buf.name, self.em.buffer_index(view, coord))
    }

    fn vectors(&mut self, i: usize) -> Vec<String> {
        self.em.register_names(&self.views[i])
    }

    fn vector_type(&mut self, dtype: Dtype, lanes: u32) -> String {
        self.em.vector_types.insert((dtype, lanes));
        dtype.vector_type_name(lanes)
    }

    fn helper(&mut self, helper: Helper) -> String {
        self.em.helpers.insert(helper);
        helper.name()
    }

    fn fresh(&mut self, prefix: &str) -> String {
        // Buffers are `p…`, `a…` and `t…`, loop variables `i…`: `k…` never collides.
        format!("k{}_{prefix}", self.em.fresh_var())
    }

    fn line(&mut self, code: String) {
        self.em.line(&code);
    }

    fn open(&mut self, code: String) {
        self.em.open(&code);
    }

    fn close(&mut self) {
        self.em.close();
    }
}
