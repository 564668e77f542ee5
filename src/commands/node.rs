//! `rxnode node set-name|show|set-publish-ref|signers`.
use crate::cli::{NodeCmd, SignersCmd};
use anyhow::Result;
use rxnode::{Ctx, Outcome};

/// Run the subcommand.
pub fn run(ctx: &Ctx, cmd: &NodeCmd) -> Result<Outcome> {
    match cmd {
        NodeCmd::SetName { name, new_key } => rxnode::cmd_set_name(ctx, name, *new_key),
        NodeCmd::Show => rxnode::cmd_show(ctx),
        NodeCmd::SetPublishRef { layout } => rxnode::cmd_set_publish_ref(ctx, (*layout).into()),
        NodeCmd::Signers(SignersCmd::List) => rxnode::cmd_signers_list(ctx),
        NodeCmd::Signers(SignersCmd::Add {
            principal,
            key,
            valid_before,
        }) => rxnode::cmd_signers_add(
            ctx,
            &rxnode::AddSigner {
                principal: principal.clone(),
                key: key.clone(),
                valid_before: valid_before.clone(),
            },
        ),
        NodeCmd::Signers(SignersCmd::Remove { who }) => rxnode::cmd_signers_remove(ctx, who),
    }
}
