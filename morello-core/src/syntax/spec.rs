//! Parsing Spec notation.

use super::{Errors, parse_name, parse_number, prefixed_number, unknown};
use crate::dtype::Dtype;
use crate::layout::PhysDim;
use crate::level::{LEVEL_COUNT, Level};
use crate::limits::{LimitsError, MemoryLimits};
use crate::primitive::Primitive;
use crate::shape::{DisplayShape, Shape};
use crate::spec::{LayoutDecl, LogicalSpec, OperandDecl, Spec, SpecError};
use crate::target::{Target, X86_AVX2};
use crate::tensor::TensorSpecError;
use proc_macro2::{TokenStream, TokenTree};
use quote::ToTokens;
use std::fmt;
use std::str::FromStr;
use syn::parse::{ParseStream, Parser};
use syn::{Token, bracketed, parenthesized};
use thiserror::Error;

/// A piece of syntax and the tokens it came from (for error spans).
struct Item<T> {
    value: T,
    tokens: TokenStream,
}

impl<T> Item<T> {
    fn error(&self, message: impl fmt::Display) -> syn::Error {
        syn::Error::new_spanned(&self.tokens, message)
    }
}

struct OperandSyntax {
    tokens: TokenStream,
    shape: Option<Item<Shape>>,
    dtype: Item<Dtype>,
    level: Item<Level>,
    layout: Option<Item<LayoutDecl>>,
    vector_size: Option<Item<u32>>,
    contig: Option<Item<u8>>,
}

/// Parses a Spec: `Prim(shape, operands..., [serial])`, optionally followed by `, [limits]`, or
/// the whole wrapped in parentheses with its limits (the paper's form).
pub fn parse_spec(input: ParseStream, target: &Target) -> syn::Result<Spec> {
    if input.peek(syn::token::Paren) {
        let content;
        parenthesized!(content in input);
        let spec = parse_spec_with_limits(&content, target)?;
        if !content.is_empty() {
            return Err(content.error("unexpected tokens after the memory limits"));
        }
        return Ok(spec);
    }
    parse_spec_with_limits(input, target)
}

fn parse_spec_with_limits(input: ParseStream, target: &Target) -> syn::Result<Spec> {
    let logical = parse_logical(input, target);
    let limits = if input.peek(Token![,]) && input.peek2(syn::token::Bracket) {
        input.parse::<Token![,]>()?;
        parse_limits(input, target)
    } else {
        Ok(target.max_limits())
    };
    match (logical, limits) {
        (Ok(logical), Ok(limits)) => Ok(Spec::new(logical, limits)),
        (Err(mut first), Err(second)) => {
            first.combine(second);
            Err(first)
        }
        (Err(e), _) | (_, Err(e)) => Err(e),
    }
}

fn parse_limits(input: ParseStream, target: &Target) -> syn::Result<MemoryLimits> {
    let content;
    let bracket = bracketed!(content in input);
    let mut values = Vec::new();
    while !content.is_empty() {
        let (v, span) = parse_number(&content, "a memory limit in bytes")?;
        values.push((v, span));
        if !content.is_empty() {
            content.parse::<Token![,]>()?;
        }
    }
    if values.len() != LEVEL_COUNT {
        return Err(syn::Error::new(
            bracket.span.join(),
            format!(
                "expected {LEVEL_COUNT} memory limits in bytes ({}), found {}",
                Level::ALL.map(|l| l.name()).join(", "),
                values.len()
            ),
        ));
    }
    let bytes: [u64; LEVEL_COUNT] = std::array::from_fn(|i| values[i].0);
    MemoryLimits::new(bytes, target).map_err(|e| {
        let level = match &e {
            LimitsError::NotWholeRegisters { level, .. }
            | LimitsError::NotPowerOfTwo { level, .. }
            | LimitsError::ExceedsCapacity { level, .. } => *level,
        };
        syn::Error::new(values[level.index()].1, e)
    })
}

fn parse_logical(input: ParseStream, target: &Target) -> syn::Result<LogicalSpec> {
    let name: syn::Ident = input
        .parse()
        .map_err(|e| syn::Error::new(e.span(), "expected a Spec such as `Matmul(1x4x4x16, (f32, GL), ...)`"))?;
    let content;
    parenthesized!(content in input);
    let shape = parse_shape(&content)?;
    let mut errors = Errors::default();
    let mut operands = Vec::new();
    let mut serial = false;
    while !content.is_empty() {
        content.parse::<Token![,]>()?;
        if content.is_empty() {
            break;
        }
        if content.peek(syn::token::Paren) {
            match parse_operand(&content) {
                Ok(op) => operands.push(op),
                Err(e) => errors.push(e),
            }
        } else if content.peek(syn::Ident) {
            let ident: syn::Ident = content.parse()?;
            if ident == "serial" {
                serial = true;
            } else {
                errors.push(syn::Error::new(
                    ident.span(),
                    format!("unexpected `{ident}`; expected an operand `(dtype, level, ...)` or `serial`"),
                ));
            }
        } else {
            return Err(content.error("expected an operand `(dtype, level, ...)` or `serial`"));
        }
    }
    let primitive = Primitive::from_name(&name.to_string());
    if name == "Compose" {
        errors.push(syn::Error::new(
            name.span(),
            "Compose pipelines are not supported yet; declare each stage as its own kernel",
        ));
    } else if primitive.is_none() {
        let names: Vec<&str> = Primitive::ALL.iter().map(|p| p.name()).collect();
        errors.push(unknown(name.span(), "primitive", &name.to_string(), names));
    }
    errors.finish()?;
    let primitive = primitive.expect("checked above");
    build_logical(primitive, &name, &shape, &operands, serial, target)
}

/// Builds and validates the logical Spec, attaching every error to the token that caused it.
fn build_logical(
    primitive: Primitive,
    name: &syn::Ident,
    shape: &Item<Shape>,
    operands: &[OperandSyntax],
    serial: bool,
    target: &Target,
) -> syn::Result<LogicalSpec> {
    let decls: Vec<OperandDecl> = operands
        .iter()
        .map(|o| OperandDecl {
            dtype: o.dtype.value,
            level: o.level.value,
            layout: o.layout.as_ref().map_or(LayoutDecl::RowMajor, |l| l.value.clone()),
            vector_size: o.vector_size.as_ref().map(|v| v.value),
            contig: o.contig.as_ref().map(|c| c.value),
        })
        .collect();
    match LogicalSpec::new(primitive, &shape.value, &decls, serial, target) {
        Ok(logical) => {
            let mut errors = Errors::default();
            for (i, op) in operands.iter().enumerate() {
                if let Some(explicit) = &op.shape {
                    let expected = logical.operands()[i].shape();
                    if explicit.value[..] != *expected {
                        let e = SpecError::OperandShape {
                            primitive,
                            spec_shape: DisplayShape(&shape.value).to_string(),
                            name: primitive.operands()[i].name,
                            expected: DisplayShape(expected).to_string(),
                            found: DisplayShape(&explicit.value).to_string(),
                        };
                        errors.push(explicit.error(e));
                    }
                }
            }
            errors.finish()?;
            Ok(logical)
        }
        Err(
            e @ (SpecError::Rank { .. }
            | SpecError::ZeroDim { .. }
            | SpecError::TooManyDims { .. }
            | SpecError::TooLarge),
        ) => Err(shape.error(e)),
        Err(e @ SpecError::OperandCount { .. }) => Err(syn::Error::new(name.span(), e)),
        Err(SpecError::Operand { name: operand_name, source }) => {
            let i = primitive.operands().iter().position(|o| o.name == operand_name).expect("known operand");
            let op = &operands[i];
            let message = format!("operand `{operand_name}`: {source}");
            Err(match &source {
                TensorSpecError::Layout(_) => match (&op.contig, &op.layout) {
                    (Some(c), _)
                        if matches!(
                            source,
                            TensorSpecError::Layout(crate::layout::LayoutError::ContigTooLarge { .. })
                        ) =>
                    {
                        c.error(message)
                    }
                    (_, Some(l)) => l.error(message),
                    _ => syn::Error::new_spanned(&op.tokens, message),
                },
                TensorSpecError::MissingVectorSize => op.level.error(message),
                TensorSpecError::UnexpectedVectorSize { .. }
                | TensorSpecError::VectorWidth { .. }
                | TensorSpecError::PartialVectors { .. } => match &op.vector_size {
                    Some(v) => v.error(message),
                    None => syn::Error::new_spanned(&op.tokens, message),
                },
            })
        }
        Err(e) => Err(syn::Error::new(name.span(), e)),
    }
}

/// Parses a shape: `1x4x16` (one literal or several tokens) or `[1, 4, 16]`.
fn parse_shape(input: ParseStream) -> syn::Result<Item<Shape>> {
    if input.peek(syn::token::Bracket) {
        let content;
        let bracket = bracketed!(content in input);
        let mut dims = Shape::new();
        while !content.is_empty() {
            dims.push(parse_dim(&content)?);
            if !content.is_empty() {
                content.parse::<Token![,]>()?;
            }
        }
        let mut tokens = TokenStream::new();
        bracket.surround(&mut tokens, |_| {});
        return Ok(Item { value: dims, tokens });
    }
    let mut tokens = TokenStream::new();
    let mut text = String::new();
    while !input.is_empty() && !input.peek(Token![,]) {
        let tt: TokenTree = input.parse()?;
        match &tt {
            TokenTree::Literal(_) | TokenTree::Ident(_) => text.push_str(&tt.to_string()),
            _ => return Err(syn::Error::new(tt.span(), "expected a shape such as `1x4x16`")),
        }
        tt.to_tokens(&mut tokens);
    }
    if text.is_empty() {
        return Err(input.error("expected a shape such as `1x4x16`"));
    }
    let mut dims = Shape::new();
    for part in text.split('x') {
        match part.parse::<u32>() {
            Ok(d) if part.chars().all(|c| c.is_ascii_digit()) => dims.push(d),
            _ => {
                return Err(syn::Error::new_spanned(
                    &tokens,
                    format!("`{text}` is not a shape; write dimension sizes separated by `x`, such as `1x4x16`"),
                ));
            }
        }
    }
    Ok(Item { value: dims, tokens })
}

fn parse_dim(input: ParseStream) -> syn::Result<u32> {
    let (v, span) = parse_number(input, "a dimension size")?;
    u32::try_from(v).map_err(|_| syn::Error::new(span, "dimension size too large"))
}

fn parse_operand(input: ParseStream) -> syn::Result<OperandSyntax> {
    let content;
    let paren = parenthesized!(content in input);
    let mut tokens = TokenStream::new();
    paren.surround(&mut tokens, |t| t.extend(content.fork().parse::<TokenStream>()));
    let mut errors = Errors::default();

    let shape = if content.peek(syn::Lit) || content.peek(syn::token::Bracket) {
        let s = parse_shape(&content)?;
        content.parse::<Token![,]>()?;
        Some(s)
    } else {
        None
    };
    let (dtype, dtype_ident) =
        parse_name(&content, ("dtype", "f32"), Dtype::from_name, Dtype::ALL.map(Dtype::name), &mut errors)?;
    content
        .parse::<Token![,]>()
        .map_err(|e| syn::Error::new(e.span(), "expected `,` and a memory level such as `GL`"))?;
    let (level, level_ident) =
        parse_name(&content, ("memory level", "GL"), Level::from_name, Level::ALL.map(Level::name), &mut errors)?;

    let (mut layout, mut vector_size, mut contig) = (None, None, None);
    while !content.is_empty() {
        content.parse::<Token![,]>()?;
        if content.is_empty() {
            break;
        }
        if content.peek(syn::token::Bracket) {
            let (dims, tokens) = parse_physical_layout(&content)?;
            set_once(&mut layout, Item { value: LayoutDecl::Physical(dims), tokens }, "layout", &mut errors);
            continue;
        }
        let ident: syn::Ident = content.parse().map_err(|e| {
            syn::Error::new(e.span(), "expected a layout (`row_major`, `col_major`, `[...]`), `vN` or `cN`")
        })?;
        let tokens = ident.to_token_stream();
        let name = ident.to_string();
        if name == "row_major" || name == "col_major" {
            let value = if name == "row_major" { LayoutDecl::RowMajor } else { LayoutDecl::ColMajor };
            set_once(&mut layout, Item { value, tokens }, "layout", &mut errors);
        } else if let Some(v) = prefixed_number(&ident, 'v') {
            match u32::try_from(v) {
                Ok(v) if v > 0 => set_once(&mut vector_size, Item { value: v, tokens }, "vector size", &mut errors),
                _ => errors.push(syn::Error::new(ident.span(), "vector size must be at least 1")),
            }
        } else if let Some(c) = prefixed_number(&ident, 'c') {
            match u8::try_from(c) {
                Ok(c) => set_once(&mut contig, Item { value: c, tokens }, "contiguity", &mut errors),
                Err(_) => errors.push(syn::Error::new(ident.span(), "contiguity is too large")),
            }
        } else if name == "ua" {
            errors.push(syn::Error::new(
                ident.span(),
                "alignment is not modeled (buffers are accessed without alignment assumptions); remove `ua`",
            ));
        } else {
            let names = ["row_major", "col_major", "v8", "c0"];
            errors.push(unknown(ident.span(), "operand property", &name, names));
        }
    }
    if let (Some(l), Some(level)) = (&layout, level)
        && !level.has_layout()
    {
        errors.push(l.error(format!("{level} tensors have no layout; remove it")));
    }
    errors.finish()?;
    Ok(OperandSyntax {
        tokens,
        shape,
        dtype: Item { value: dtype.expect("checked"), tokens: dtype_ident.to_token_stream() },
        level: Item { value: level.expect("checked"), tokens: level_ident.to_token_stream() },
        layout,
        vector_size,
        contig,
    })
}

fn set_once<T>(slot: &mut Option<Item<T>>, item: Item<T>, what: &str, errors: &mut Errors) {
    if slot.is_some() {
        errors.push(item.error(format!("the {what} is given twice")));
    } else {
        *slot = Some(item);
    }
}

/// Parses `[0, 2, 1, 2 p16]` (a strip may also be written `2p16`).
pub(crate) fn parse_physical_layout(input: ParseStream) -> syn::Result<(Vec<PhysDim>, TokenStream)> {
    let content;
    let bracket = bracketed!(content in input);
    let mut tokens = TokenStream::new();
    bracket.surround(&mut tokens, |t| t.extend(content.fork().parse::<TokenStream>()));
    let mut dims = Vec::new();
    while !content.is_empty() {
        let lit: syn::LitInt = content.parse().map_err(|e| syn::Error::new(e.span(), "expected a dimension index"))?;
        let logical: u8 = lit.base10_parse().map_err(|e| syn::Error::new(lit.span(), e))?;
        let strip = match lit.suffix() {
            "" if content.peek(syn::Ident) => {
                let ident: syn::Ident = content.parse()?;
                Some(parse_strip(&ident.to_string(), ident.span())?)
            }
            "" => None,
            suffix => Some(parse_strip(suffix, lit.span())?),
        };
        dims.push(PhysDim { logical, strip });
        if !content.is_empty() {
            content.parse::<Token![,]>()?;
        }
    }
    Ok((dims, tokens))
}

fn parse_strip(text: &str, span: proc_macro2::Span) -> syn::Result<u32> {
    text.strip_prefix('p')
        .and_then(|n| n.parse::<u32>().ok())
        .ok_or_else(|| syn::Error::new(span, format!("expected a strip size such as `p16`, found `{text}`")))
}

/// An error from parsing Spec text.
#[derive(Clone, PartialEq, Eq, Debug, Error)]
pub struct ParseSpecError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ParseSpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.column, self.message)
    }
}

impl Spec {
    /// Parses Spec notation for `target`. `×` may be used in place of `x`.
    pub fn parse_for(text: &str, target: &Target) -> Result<Spec, ParseSpecError> {
        let normalized = text.replace('×', "x");
        let parser = |input: ParseStream| {
            let spec = parse_spec(input, target)?;
            if !input.is_empty() {
                return Err(input.error("unexpected tokens after the Spec"));
            }
            Ok(spec)
        };
        parser.parse_str(&normalized).map_err(|e| {
            let (line, column) = super::span_location(e.span());
            ParseSpecError { line, column, message: e.to_string() }
        })
    }
}

impl FromStr for Spec {
    type Err = ParseSpecError;

    /// Parses Spec notation for the default target (x86-64 AVX2).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Spec::parse_for(s, &X86_AVX2)
    }
}
