//! A bound on how deeply brackets nest, checked before syn sees the tokens: syn (and the
//! parsers here) descend into nested groups recursively, so hostile input such as ten thousand
//! `(` would overflow the stack instead of producing an error.

use proc_macro2::{TokenStream, TokenTree};
use std::str::FromStr;
use syn::parse::Parser;

/// How deeply `()`, `[]` and `{}` may nest in Spec notation, schedules and `kernel!`
/// declarations. Valid input nests a few levels deep (a Spec four, a schedule one more per
/// `subschedule`).
pub const MAX_NESTING: usize = 128;

/// Checks that no group in `tokens` is nested more than [`MAX_NESTING`] deep; the error is on
/// the opening delimiter of the first group that is. Walks the tokens without recursion.
pub fn check_nesting(tokens: &TokenStream) -> syn::Result<()> {
    let mut open = vec![tokens.clone().into_iter()];
    while let Some(level) = open.last_mut() {
        match level.next() {
            Some(TokenTree::Group(group)) => {
                if open.len() >= MAX_NESTING {
                    return Err(syn::Error::new(
                        group.span_open(),
                        format!("brackets nest more than {MAX_NESTING} deep here"),
                    ));
                }
                open.push(group.stream().into_iter());
            }
            Some(_) => {}
            None => {
                open.pop();
            }
        }
    }
    Ok(())
}

/// Tokenizes `text`, checks its nesting and parses it with `parser`: `Parser::parse_str`
/// without the stack overflow on deeply nested input.
pub(crate) fn parse_text<P: Parser>(parser: P, text: &str) -> syn::Result<P::Output> {
    let tokens = TokenStream::from_str(text)?;
    check_nesting(&tokens)?;
    parser.parse2(tokens)
}
