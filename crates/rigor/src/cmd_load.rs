//! TEMPORARY placeholder written by the lead so the crate compiles; the engine author replaces
//! this whole file with the real `rigor load`.
#[derive(clap::Args, Debug)]
pub struct LoadArgs {
    pub url: String,
}
pub fn execute(_args: &LoadArgs) -> anyhow::Result<i32> {
    anyhow::bail!("not yet")
}
