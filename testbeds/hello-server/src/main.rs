//! The `hello-server` binary: all behaviour lives in the library so tests can run it in-process.

fn main() -> std::process::ExitCode {
    hello_server::cli::main()
}
