//! Tensors whose runs start a whole number of memory pages apart ([`TensorSpec::paged`]), and
//! the share of a cache they take.

use super::{TensorData, TensorSpec, TensorSpecError, intern};
use crate::layout::Layout;
use crate::level::Level;
use crate::target::Target;

impl TensorSpec {
    /// This tensor with its runs declared [`paged`](TensorSpec::paged): how a tile of a buffer
    /// whose rows are a multiple of a page long is written in Spec syntax (`paged`).
    pub fn with_paged_runs(&self) -> Result<TensorSpec, TensorSpecError> {
        if self.0.level.is_register_file() || self.is_contiguous() {
            return Err(TensorSpecError::PagedWithoutRuns { level: self.0.level });
        }
        Ok(intern(TensorData { paged: true, ..self.with_shape_and_layout(&self.0.shape, self.0.layout.clone()) }))
    }

    /// Whether this tensor's runs (the contiguous blocks of a tensor that is not contiguous:
    /// the pieces of rows of a tile of a row-major matrix) start a whole number of memory pages
    /// apart, as the rows of a 1024-wide f32 matrix do. Caches index their sets by address
    /// within a page, so such runs all fall into the same few sets, however many there are:
    /// see [`TensorSpec::cache_footprint_lines`].
    pub fn paged(&self) -> bool {
        self.0.paged
    }

    /// The cache lines' worth of the capacity of a cache of `cache_bytes` this tensor takes
    /// when the cache holds it all: its cache lines ([`TensorSpec::cache_lines`]), except for
    /// [`paged`](Self::paged) runs shorter than a page when there are more of them than the
    /// cache holds pages: then a page's worth each. A cache indexes its sets by address within a
    /// page, and every such run lands at the same addresses within its page, so the sets they
    /// fall into hold as many of them as the cache holds pages (its ways, for an L1 of one page
    /// per way); past that they evict each other, as if each took a page.
    pub fn cache_footprint_lines(&self, cache_bytes: u64, target: &Target) -> u64 {
        let lines = self.cache_lines(target);
        if !self.0.paged || self.is_contiguous() {
            return lines;
        }
        let run_bytes = self.0.run_bytes;
        let line = u64::from(target.line_bytes);
        let page = u64::from(target.streams.page_bytes);
        let (run_lines, page_lines) = (run_bytes.div_ceil(line).max(1), (page / line).max(1));
        let runs = lines / run_lines;
        if runs <= cache_bytes / page {
            return lines;
        }
        runs * run_lines.div_ceil(page_lines) * page_lines
    }

    /// Bytes of L1 this tensor (in memory) takes once a cache fill puts it there: its
    /// [`cache_footprint_lines`](Self::cache_footprint_lines) for the target's L1.
    pub fn l1_footprint_bytes(&self, target: &Target) -> u64 {
        self.cache_footprint_lines(target.level(Level::L1).capacity_bytes, target) * u64::from(target.line_bytes)
    }

    /// Whether the runs of a `tile_shape` tile of this tensor (in memory), whose layout is
    /// `tile_layout`, start whole pages apart: the runs follow the innermost dimension outside
    /// the tile's contiguous block along which it has more than one element. Inside this
    /// tensor's own contiguous block that dimension's stride is the product of the extents
    /// inside it; outside, the tile's runs are this tensor's, or lie further apart by whole
    /// multiples of its runs' distance (layouts nest their dimensions).
    pub(super) fn tile_is_paged(
        &self,
        tile_shape: &[u32],
        tile_layout: &Layout,
        target: &Target,
    ) -> Result<bool, TensorSpecError> {
        if tile_layout.is_fully_contiguous() {
            return Ok(false);
        }
        let whole = self.0.layout.extents(&self.0.shape);
        let tile = self.0.layout.tile_extents(tile_shape)?;
        let n = whole.len();
        let equal_suffix = (0..n).rev().take_while(|&i| whole[i] == tile[i]).count();
        let own_contig = usize::from(self.0.layout.contig()).min(n);
        let tile_contig = own_contig.min(equal_suffix + 1);
        let Some(across) = (0..n - tile_contig).rev().find(|&i| tile[i] > 1) else { return Ok(false) };
        if across < n - own_contig {
            return Ok(self.0.paged);
        }
        let stride: u64 =
            whole[across + 1..].iter().map(|&e| u64::from(e)).product::<u64>() * u64::from(self.0.dtype.size_bytes());
        Ok(stride.is_multiple_of(u64::from(target.streams.page_bytes)))
    }
}
