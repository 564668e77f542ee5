//! Git access: fetch, blob reads from remote refs, and publication to `rx-node`
//! (its refspec guard and content scanner).
pub(crate) mod ops;
pub(crate) mod publish;
pub(crate) mod refspec;
pub(crate) mod scan;
