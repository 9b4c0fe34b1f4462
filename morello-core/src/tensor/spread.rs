//! Tiles that take one value from each of several bands of a dimension (a spread loop:
//! [`crate::imp::LoopNode::spread`]).

use super::{TensorData, TensorSpec, TensorSpecError, intern};
use crate::layout::PhysKind;
use crate::target::Target;

impl TensorSpec {
    /// The specification of a `tile_shape` tile of this tensor (in memory) whose `tile_shape[dim]`
    /// values along `dim` lie `band` apart: one from each band of `band` consecutive values.
    /// `dim` must be laid out as one plain (dynamic) physical dimension. The tile's layout is the
    /// plain tile's with that physical dimension no longer adjacent to the ones inside it; its
    /// runs (when `dim` is what separates them) start `band` times that dimension's stride apart.
    pub fn spread_tile(
        &self,
        tile_shape: &[u32],
        dim: usize,
        band: u32,
        target: &Target,
    ) -> Result<TensorSpec, TensorSpecError> {
        let logical = dim as u8;
        let whole_dims = self.0.layout.dims();
        let mine: Vec<usize> = (0..whole_dims.len()).filter(|&i| whole_dims[i].logical == logical).collect();
        let position = match mine.as_slice() {
            &[p] if whole_dims[p].kind == PhysKind::Dynamic && !self.0.level.is_register_file() => p,
            _ => return Err(TensorSpecError::SpreadNeedsPlainDimension { dim, layout: self.0.layout.to_string() }),
        };
        let plain = self.0.layout.tile(&self.0.shape, tile_shape)?;
        let tile_dims = plain.dims();
        let n = tile_dims.len();
        let Some(at) = tile_dims.iter().position(|p| p.logical == logical) else {
            // One value along `dim`: the plain tile.
            return self.tile(tile_shape, target);
        };
        // Physical dimensions inside `dim`'s stay as adjacent as in the plain tile; `dim`'s own
        // and those outside it are not.
        let contig = plain.contig().min((n - at - 1) as u8);
        let layout = plain.with_contig(contig);
        // When `dim` is what separates the runs, they lie `band` of its steps apart.
        let paged = if usize::from(contig) == n - at - 1 {
            let whole_extents = self.0.layout.extents(&self.0.shape);
            let stride: u64 = whole_extents[position + 1..].iter().map(|&e| u64::from(e)).product();
            let bytes = stride * u64::from(band) * u64::from(self.0.dtype.size_bytes());
            bytes.is_multiple_of(u64::from(target.streams.page_bytes))
        } else {
            self.tile_is_paged(tile_shape, &plain, target)?
        };
        Ok(intern(TensorData { paged, ..self.with_shape_and_layout(tile_shape, layout) }))
    }
}
