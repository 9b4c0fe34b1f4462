//! Parsing Spec notation.

use super::operand::{Item, OperandSyntax, parse_operands, parse_shape};
use super::{Errors, parse_name, parse_number, unknown};
use crate::dtype::Dtype;
use crate::layout::LayoutError;
use crate::level::{LEVEL_COUNT, Level};
use crate::limits::{LimitsError, MemoryLimits};
use crate::primitive::Primitive;
use crate::shape::{DisplayShape, Shape};
use crate::spec::{ComponentDecl, LogicalSpec, OperandDecl, Spec, SpecError};
use crate::target::{Target, X86_AVX2};
use crate::tensor::TensorSpecError;
use proc_macro2::TokenStream;
use std::str::FromStr;
use syn::parse::ParseStream;
use syn::{Token, bracketed, parenthesized};

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
            LimitsError::NotWholeRegisters { level, .. } | LimitsError::NotPermitted { level, .. } => *level,
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
    if name == "Compose" {
        return parse_compose(&name, &content, target);
    }
    let shape = parse_shape(&content)?;
    let param = parse_param(&content)?;
    let (operands, serial) = parse_operands(&content)?;
    let primitive = resolve_primitive(&name, param.as_ref())?;
    let decls: Vec<OperandDecl> = operands.iter().map(OperandSyntax::decl).collect();
    let logical =
        LogicalSpec::new(primitive, &shape.value, &decls, serial, target).map_err(|e| match (&e, &param) {
            (SpecError::ParamOutOfRange { .. }, Some(p)) => syn::Error::new(p.span, e),
            _ => spec_error(e, &name, Some(&shape), &operands, &[]),
        })?;
    check_explicit_shapes(&logical, &format!("{primitive}({})", DisplayShape(&shape.value)), &operands)?;
    Ok(logical)
}

/// A dimension parameter written after the shape: `, dim=1` or `, scan=2`.
struct Param {
    name: syn::Ident,
    value: u8,
    span: proc_macro2::Span,
}

fn parse_param(input: ParseStream) -> syn::Result<Option<Param>> {
    if !(input.peek(Token![,]) && input.peek2(syn::Ident) && input.peek3(Token![=])) {
        return Ok(None);
    }
    input.parse::<Token![,]>()?;
    let name: syn::Ident = input.parse()?;
    input.parse::<Token![=]>()?;
    let (value, span) = parse_number(input, "a dimension index")?;
    let value = u8::try_from(value).map_err(|_| syn::Error::new(span, "dimension index too large"))?;
    Ok(Some(Param { name, value, span }))
}

/// The primitive `name` names, checking that its parameter is given exactly when needed.
fn resolve_primitive(name: &syn::Ident, param: Option<&Param>) -> syn::Result<Primitive> {
    let text = name.to_string();
    let Some(primitive) = Primitive::from_name(&text, param.map_or(0, |p| p.value)) else {
        return Err(unknown(name.span(), "primitive", &text, Primitive::names()));
    };
    match (primitive.def().param, param) {
        (Some(expected), None) => Err(syn::Error::new(
            name.span(),
            format!("{text} needs `{expected}=N` (a dimension index) after its shape"),
        )),
        (None, Some(p)) => Err(syn::Error::new(p.name.span(), format!("{text} takes no `{}=` parameter", p.name))),
        (Some(expected), Some(p)) if p.name != expected => {
            Err(syn::Error::new(p.name.span(), format!("{text} takes `{expected}=`, not `{}=`", p.name)))
        }
        _ => Ok(primitive),
    }
}

/// A Compose component as written: `Prim(shape[, param=N])[ -> dtype]`.
struct ComponentSyntax {
    name: syn::Ident,
    decl: ComponentDecl,
    tokens: TokenStream,
}

fn parse_compose(name: &syn::Ident, content: ParseStream, target: &Target) -> syn::Result<LogicalSpec> {
    let list;
    bracketed!(list in content);
    let mut components = Vec::new();
    let mut errors = Errors::default();
    while !list.is_empty() {
        let start = list.fork();
        let component_name: syn::Ident = list.parse()?;
        let inner;
        parenthesized!(inner in list);
        let shape = parse_shape(&inner)?;
        let param = parse_param(&inner)?;
        if !inner.is_empty() {
            return Err(inner.error("a Compose component is `Primitive(shape[, dim=N])`; operands follow the list"));
        }
        let output_dtype = if list.peek(Token![->]) {
            list.parse::<Token![->]>()?;
            let (dtype, _) =
                parse_name(&list, ("dtype", "f32"), Dtype::from_name, Dtype::ALL.map(Dtype::name), &mut errors)?;
            dtype
        } else {
            None
        };
        let tokens: TokenStream = start.parse::<TokenStream>().unwrap_or_default().into_iter().take(2).collect();
        match resolve_primitive(&component_name, param.as_ref()) {
            Ok(primitive) => components.push(ComponentSyntax {
                name: component_name,
                decl: ComponentDecl { primitive, shape: shape.value, output_dtype },
                tokens,
            }),
            Err(e) => errors.push(e),
        }
        if !list.is_empty() {
            list.parse::<Token![,]>()?;
        }
    }
    let (operands, serial) = parse_operands(content)?;
    errors.finish()?;
    let decls: Vec<ComponentDecl> = components.iter().map(|c| c.decl.clone()).collect();
    let operand_decls: Vec<OperandDecl> = operands.iter().map(OperandSyntax::decl).collect();
    let logical = LogicalSpec::compose(&decls, &operand_decls, serial, target)
        .map_err(|e| spec_error(e, name, None, &operands, &components))?;
    check_explicit_shapes(&logical, "this Compose", &operands)?;
    Ok(logical)
}

/// Attaches a Spec validation error to the tokens that caused it.
fn spec_error(
    e: SpecError,
    name: &syn::Ident,
    shape: Option<&Item<Shape>>,
    operands: &[OperandSyntax],
    components: &[ComponentSyntax],
) -> syn::Error {
    match &e {
        SpecError::Rank { .. }
        | SpecError::ZeroDim { .. }
        | SpecError::TooManyDims { .. }
        | SpecError::TooLarge
        | SpecError::ParamOutOfRange { .. } => match shape {
            Some(shape) => shape.error(e),
            None => syn::Error::new(name.span(), e),
        },
        SpecError::Component { index, .. } => match components.get(*index) {
            Some(c) if !c.tokens.is_empty() => syn::Error::new_spanned(&c.tokens, e),
            Some(c) => syn::Error::new(c.name.span(), e),
            None => syn::Error::new(name.span(), e),
        },
        SpecError::Operand { index, source, .. } => {
            let op = &operands[*index];
            match source {
                TensorSpecError::Layout(LayoutError::ContigTooLarge { .. }) if op.contig.is_some() => {
                    op.contig.as_ref().expect("checked").error(e)
                }
                TensorSpecError::Layout(_) => match &op.layout {
                    Some(l) => l.error(e),
                    None => syn::Error::new_spanned(&op.tokens, e),
                },
                TensorSpecError::MissingVectorSize => op.level.error(e),
                TensorSpecError::SpreadNeedsPlainDimension { .. } => syn::Error::new_spanned(&op.tokens, e),
                TensorSpecError::PagedWithoutRuns { .. } => match &op.paged {
                    Some(p) => p.error(e),
                    None => syn::Error::new_spanned(&op.tokens, e),
                },
                TensorSpecError::UnexpectedVectorSize { .. }
                | TensorSpecError::VectorWidth { .. }
                | TensorSpecError::PartialVectors { .. } => match &op.vector_size {
                    Some(v) => v.error(e),
                    None => syn::Error::new_spanned(&op.tokens, e),
                },
            }
        }
        _ => syn::Error::new(name.span(), e),
    }
}

/// Operands may start with their own shape; it must be the one the Spec implies.
fn check_explicit_shapes(logical: &LogicalSpec, what: &str, operands: &[OperandSyntax]) -> syn::Result<()> {
    let mut errors = Errors::default();
    for (i, op) in operands.iter().enumerate() {
        if let Some(explicit) = &op.shape {
            let expected = logical.operands()[i].shape();
            if explicit.value[..] != *expected {
                errors.push(explicit.error(SpecError::OperandShape {
                    what: what.to_owned(),
                    name: logical.operand_name(i).into_owned(),
                    expected: DisplayShape(expected).to_string(),
                    found: DisplayShape(&explicit.value).to_string(),
                }));
            }
        }
    }
    errors.finish()
}

/// An error from parsing Spec text.
pub type ParseSpecError = super::ParseTextError;

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
        super::nesting::parse_text(parser, &normalized).map_err(|e| {
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
