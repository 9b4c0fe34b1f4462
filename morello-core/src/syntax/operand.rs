//! Operands, shapes and physical layouts in Spec syntax.

use super::{Errors, parse_name, parse_number, prefixed_number, unknown};
use crate::dtype::Dtype;
use crate::layout::PhysDim;
use crate::level::Level;
use crate::shape::Shape;
use crate::spec::{LayoutDecl, OperandDecl};
use proc_macro2::{TokenStream, TokenTree};
use quote::ToTokens;
use std::fmt;
use syn::parse::ParseStream;
use syn::{Token, bracketed, parenthesized};

/// A piece of syntax and the tokens it came from (for error spans).
pub(crate) struct Item<T> {
    pub(crate) value: T,
    pub(crate) tokens: TokenStream,
}

impl<T> Item<T> {
    pub(crate) fn error(&self, message: impl fmt::Display) -> syn::Error {
        syn::Error::new_spanned(&self.tokens, message)
    }
}

pub(crate) struct OperandSyntax {
    pub(crate) tokens: TokenStream,
    pub(crate) shape: Option<Item<Shape>>,
    pub(crate) dtype: Item<Dtype>,
    pub(crate) level: Item<Level>,
    pub(crate) layout: Option<Item<LayoutDecl>>,
    pub(crate) vector_size: Option<Item<u32>>,
    pub(crate) contig: Option<Item<u8>>,
    pub(crate) paged: Option<Item<()>>,
}

impl OperandSyntax {
    /// The operand as a declaration (defaults filled in).
    pub(crate) fn decl(&self) -> OperandDecl {
        OperandDecl {
            dtype: self.dtype.value,
            level: self.level.value,
            layout: self.layout.as_ref().map_or(LayoutDecl::RowMajor, |l| l.value.clone()),
            vector_size: self.vector_size.as_ref().map(|v| v.value),
            contig: self.contig.as_ref().map(|c| c.value),
            paged: self.paged.is_some(),
        }
    }
}

/// Parses `, operand`* and an optional `, serial` up to the end of `input`, collecting every
/// operand error.
pub(crate) fn parse_operands(input: ParseStream) -> syn::Result<(Vec<OperandSyntax>, bool)> {
    let mut errors = Errors::default();
    let mut operands = Vec::new();
    let mut serial = false;
    while !input.is_empty() {
        input.parse::<Token![,]>()?;
        if input.is_empty() {
            break;
        }
        if input.peek(syn::token::Paren) {
            match parse_operand(input) {
                Ok(op) => operands.push(op),
                Err(e) => errors.push(e),
            }
        } else if input.peek(syn::Ident) {
            let ident: syn::Ident = input.parse()?;
            if ident == "serial" {
                serial = true;
            } else {
                errors.push(syn::Error::new(
                    ident.span(),
                    format!("unexpected `{ident}`; expected an operand `(dtype, level, ...)` or `serial`"),
                ));
            }
        } else {
            return Err(input.error("expected an operand `(dtype, level, ...)` or `serial`"));
        }
    }
    errors.finish()?;
    Ok((operands, serial))
}

/// Parses a shape: `1x4x16` (one literal or several tokens) or `[1, 4, 16]`.
pub(crate) fn parse_shape(input: ParseStream) -> syn::Result<Item<Shape>> {
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

pub(crate) fn parse_dim(input: ParseStream) -> syn::Result<u32> {
    let (v, span) = parse_number(input, "a dimension size")?;
    u32::try_from(v).map_err(|_| syn::Error::new(span, "dimension size too large"))
}

pub(crate) fn parse_operand(input: ParseStream) -> syn::Result<OperandSyntax> {
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

    let (mut layout, mut vector_size, mut contig, mut paged) = (None, None, None, None);
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
            syn::Error::new(e.span(), "expected a layout (`row_major`, `col_major`, `[...]`), `vN`, `cN` or `paged`")
        })?;
        let tokens = ident.to_token_stream();
        let name = ident.to_string();
        if name == "row_major" || name == "col_major" {
            let value = if name == "row_major" { LayoutDecl::RowMajor } else { LayoutDecl::ColMajor };
            set_once(&mut layout, Item { value, tokens }, "layout", &mut errors);
        } else if let Some(v) = prefixed_number(&ident, 'v') {
            match u32::try_from(v) {
                Ok(0) => errors.push(syn::Error::new(ident.span(), "vector size must be at least 1")),
                Ok(v) => set_once(&mut vector_size, Item { value: v, tokens }, "vector size", &mut errors),
                Err(_) => errors.push(syn::Error::new(ident.span(), "vector size too large")),
            }
        } else if let Some(c) = prefixed_number(&ident, 'c') {
            match u8::try_from(c) {
                Ok(c) => set_once(&mut contig, Item { value: c, tokens }, "contiguity", &mut errors),
                Err(_) => errors.push(syn::Error::new(ident.span(), "contiguity is too large")),
            }
        } else if name == "paged" {
            set_once(&mut paged, Item { value: (), tokens }, "`paged`", &mut errors);
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
        paged,
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
                Some((ident.to_string(), ident.span()))
            }
            "" => None,
            suffix => Some((suffix.to_owned(), lit.span())),
        };
        dims.push(match strip {
            None => PhysDim::dynamic(logical),
            Some((text, span)) => parse_strip(logical, &text, span)?,
        });
        if !content.is_empty() {
            content.parse::<Token![,]>()?;
        }
    }
    Ok((dims, tokens))
}

/// `p16` (packed) or `oe16` (odd-even) after a dimension index.
fn parse_strip(logical: u8, text: &str, span: proc_macro2::Span) -> syn::Result<PhysDim> {
    let parsed = if let Some(n) = text.strip_prefix("oe") {
        n.parse::<u32>().ok().map(|s| PhysDim::odd_even(logical, s))
    } else {
        text.strip_prefix('p').and_then(|n| n.parse::<u32>().ok()).map(|s| PhysDim::packed(logical, s))
    };
    parsed.ok_or_else(|| {
        syn::Error::new(span, format!("expected a strip such as `p16` (packed) or `oe16` (odd-even), found `{text}`"))
    })
}
