//! What `#[derive(Disclose)]` emits beside its errors: a stand-in impl, so uses of the type
//! elsewhere do not add errors of their own.

use proc_macro2::TokenStream;
use quote::quote;

use super::ast::{Data, Input};
use super::expand::{argument_field_checks, impl_disclose};

pub(crate) fn derive(error: syn::Error, input: &Input<'_>) -> TokenStream {
    let error = error.to_compile_error();
    // A union cannot be an error type: emit the errors alone.
    if let Data::Union(_) = input.data {
        return error;
    }
    let stand_in = impl_disclose(input, &quote!(::core::unreachable!()), &TokenStream::new());
    // Independent of the mistakes: a field of an error type is reported beside them.
    let argument_fields = argument_field_checks(input);
    quote! {
        #error

        #stand_in

        #argument_fields
    }
}
