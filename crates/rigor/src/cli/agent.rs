//! `rigor agent --stdio`: the agent a remote rigor starts over ssh (or another stdio
//! transport) to run load, or to build, start and measure the application, on that host. People do not run it by hand; docs/agent.md describes the protocol.

use crate::exit::Exit;
use crate::failure::Failure;

/// Flags of `rigor agent`.
#[derive(clap::Args, Debug)]
pub struct AgentArgs {
    /// Speak the agent protocol on stdin and stdout (the only mode): JSON lines in, JSON lines
    /// out, logs on stderr; exits when stdin closes.
    #[arg(long)]
    pub stdio: bool,
}

/// Serves the protocol until the client says bye or stdin closes.
pub fn execute(a: &AgentArgs) -> Result<Exit, Failure> {
    if !a.stdio {
        return Err(Failure::usage(
            "rigor agent needs --stdio: it speaks its protocol on stdin and stdout only",
        ));
    }
    crate::exec::agent_guards();
    let mut apps = crate::exec::AppHost::new(crate::exec::AppHost::default_root());
    let tools = crate::exec::tool_on_host::run_in_work_dir;
    rigor_agent::serve::serve_stdio(&mut apps, tools, || {
        crate::interrupt::flag().store(true, std::sync::atomic::Ordering::SeqCst)
    })
    .map(|()| Exit::Success)
    .map_err(|e| Failure::Failed(anyhow::anyhow!("agent: {e}")))
}
