//! Git access: fetch, blob reads from remote refs, and publication to `rx-node`
//! (its refspec guard and content scanner), and the CA certificates of HTTPS
//! remotes (loaded when a remote may need them).
pub(crate) mod ops;
pub(crate) mod publish;
pub(crate) mod refspec;
pub(crate) mod scan;
