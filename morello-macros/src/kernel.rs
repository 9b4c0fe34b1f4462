//! `kernel!`: the `extern "C"` declaration of a compiled kernel and its safe wrappers.

use morello_core::codegen::signature::{KernelParam, kernel_params};
use morello_core::level::Level;
use morello_core::symbol::build_marker_env;
use morello_core::syntax::{KernelDecl, elaborate_kernels, parse_kernel_decls};
use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};

pub fn expand(input: TokenStream) -> syn::Result<TokenStream> {
    let decls = parse_kernel_decls(input)?;
    // Elaborated here only for its errors: the build script elaborates again in its own process.
    elaborate_kernels(&decls)?;
    let package = std::env::var("CARGO_PKG_NAME").unwrap_or_default();
    Ok(decls.iter().map(|d| expand_one(d, &package)).collect())
}

/// A kernel parameter ([`KernelParam`]) with its Rust name and element type as tokens.
struct Param {
    name: syn::Ident,
    element: syn::Type,
    abi: KernelParam,
}

fn expand_one(decl: &KernelDecl, package: &str) -> TokenStream {
    let KernelDecl { attrs, vis, name, spec, target, .. } = decl;
    let symbol = decl.symbol(package);
    let name_str = decl.plain_name();
    let try_name = format_ident!("try_{}", name_str);
    let params: Vec<Param> = kernel_params(spec)
        .into_iter()
        .map(|abi| Param {
            name: format_ident!("{}", abi.name),
            element: syn::parse_str(abi.dtype.rust_type()).expect("dtype Rust types are paths"),
            abi,
        })
        .collect();

    let signature = params.iter().map(|p| {
        let (n, t) = (&p.name, &p.element);
        if p.abi.writes { quote!(#n: &mut [#t]) } else { quote!(#n: &[#t]) }
    });
    let signature2 = signature.clone();
    let arg_names: Vec<&syn::Ident> = params.iter().map(|p| &p.name).collect();
    let length_checks = params.iter().map(|p| {
        let n = &p.name;
        let n_str = n.to_string();
        // Lengths are computed on the build host; refuse what the target's usize cannot hold.
        match usize::try_from(p.abi.elements) {
            Ok(len) => quote!(::morello::__private::check_len(#name_str, #n_str, #len, #n.len())?;),
            Err(_) => syn::Error::new(
                name.span(),
                format!("operand `{n_str}` has {} elements, more than fit in memory", p.abi.elements),
            )
            .into_compile_error(),
        }
    });
    let ffi_params = params.iter().enumerate().map(|(i, p)| {
        let arg = format_ident!("p{}", i);
        let t = &p.element;
        if p.abi.writes { quote!(#arg: *mut #t) } else { quote!(#arg: *const #t) }
    });
    let ffi_args = params.iter().map(|p| {
        let n = &p.name;
        if p.abi.writes { quote!(#n.as_mut_ptr()) } else { quote!(#n.as_ptr()) }
    });
    let features: Vec<&str> = target.isa.iter().map(|f| f.detect_name).collect();
    let detect = features.iter().map(|f| {
        quote! {
            if !::std::is_x86_feature_detected!(#f) {
                missing.push(#f);
            }
        }
    });

    let marker = build_marker_env(&symbol);
    let fix = format!(
        "morello: kernel `{name_str}` has not been compiled for this crate. Add \
         `morello_build::Build::new().file(\"<the file declaring it>\").compile(\"kernels\");` \
         to build.rs, and `morello-build` to [build-dependencies]"
    );
    let runtime_layout = runtime_layout_check();
    let marker_check = quote_spanned!(name.span()=> const _: &str = ::core::env!(#marker, #fix););
    let level_note = if spec.operands().iter().any(|t| t.level().is_register_file()) {
        let names: Vec<String> = spec
            .operands()
            .iter()
            .enumerate()
            .filter(|(_, t)| t.level() == Level::RF || t.level() == Level::VRF)
            .map(|(i, _)| spec.logical().operand_name(i).into_owned())
            .collect();
        format!(
            " Register-level operands ({}) are passed in memory and loaded into registers on entry.",
            names.join(", ")
        )
    } else {
        String::new()
    };
    let spec_doc = format!(" Implements `{spec}` on {}.{level_note}", target.name);
    let try_doc = format!(" Like [`{name_str}`], but returns an error instead of panicking.");
    let lens =
        params.iter().map(|p| format!("`{}`: {} elements", p.name, p.abi.elements)).collect::<Vec<_>>().join(", ");
    let lens_doc = format!(" Operand buffers (in their declared layouts): {lens}.");

    let spec_const = format_ident!("{}_SPEC", name_str.to_uppercase());
    let spec_text = spec.to_string();
    let spec_const_doc = format!(" The Spec of [`{name_str}`], in Spec notation (parse it with `morello_core`).");

    quote! {
        #[doc = #spec_const_doc]
        #vis const #spec_const: &str = #spec_text;

        #(#attrs)*
        ///
        #[doc = #spec_doc]
        #[doc = #lens_doc]
        ///
        /// # Panics
        ///
        /// If a slice has the wrong length or the CPU lacks the instructions the kernel uses.
        #[track_caller]
        #vis fn #name(#(#signature),*) {
            if let ::core::result::Result::Err(error) = #try_name(#(#arg_names),*) {
                ::core::panic!("{}", error);
            }
        }

        #[doc = #try_doc]
        #vis fn #try_name(#(#signature2),*) -> ::core::result::Result<(), ::morello::KernelError> {
            #marker_check
            #(#length_checks)*
            static CPU: ::morello::__private::CpuSupport = ::morello::__private::CpuSupport::new(#name_str, || {
                #[allow(unused_mut)]
                let mut missing: ::std::vec::Vec<&'static str> = ::std::vec::Vec::new();
                #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
                {
                    #(#detect)*
                }
                #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
                {
                    missing.extend([#(#features),*]);
                }
                missing
            });
            CPU.check()?;
            unsafe extern "C" {
                #[link_name = #symbol]
                fn kernel(#(#ffi_params,)* rt: *const ::morello::__private::Runtime);
            }
            #runtime_layout
            let rt = ::morello::__private::Runtime::current();
            // SAFETY: every slice has the length the kernel reads or writes (checked above),
            // inputs are shared and outputs exclusive borrows (so they cannot overlap, as the
            // kernel's `restrict` parameters require), the CPU supports the kernel's ISA, the
            // runtime outlives the call, and the kernel keeps no pointer after returning.
            unsafe { kernel(#(#ffi_args,)* &rt) };
            ::core::result::Result::Ok(())
        }
    }
}

/// A `const` item asserting that `morello::__private::Runtime` has the layout the generated C
/// declares (`morello_core::codegen::runtime`).
fn runtime_layout_check() -> TokenStream {
    use morello_core::codegen::runtime::{RUNTIME_FIELDS, RUNTIME_SIZE_IN_POINTERS};
    let message = "morello's Runtime must match morello_runtime (morello_core::codegen::runtime)";
    let fields = RUNTIME_FIELDS.iter().map(|field| {
        let name = syn::Ident::new(field.name, proc_macro2::Span::call_site());
        let offset = field.offset_in_pointers;
        quote! {
            ::core::assert!(
                ::core::mem::offset_of!(::morello::__private::Runtime, #name) == #offset * ::core::mem::size_of::<usize>(),
                #message
            );
        }
    });
    quote! {
        const _: () = {
            #(#fields)*
            ::core::assert!(
                ::core::mem::size_of::<::morello::__private::Runtime>()
                    == #RUNTIME_SIZE_IN_POINTERS * ::core::mem::size_of::<usize>(),
                #message
            );
        };
    }
}
