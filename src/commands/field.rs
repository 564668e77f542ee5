//! A library error about one field of a request ([`rxnode::BadField`]), told
//! with the flag the operator typed for it.

/// `e` with a refused field named by its flag (`flag_of(field)`, else the field
/// itself), exit 2 still; any other error as it is.
pub fn flag_named(e: anyhow::Error, flag_of: fn(&str) -> Option<&'static str>) -> anyhow::Error {
    match e.downcast_ref::<rxnode::BadField>() {
        Some(b) => rxnode::bad_input(b.named(flag_of(b.field).unwrap_or(b.field))),
        None => e,
    }
}
