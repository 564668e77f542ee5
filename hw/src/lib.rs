//! `rxnode-hw`: the only door to radios.
#![deny(missing_docs)]
