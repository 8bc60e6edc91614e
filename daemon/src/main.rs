//! The `elicitd` binary; the daemon is [`elicitd::main`].

fn main() -> std::process::ExitCode {
    elicitd::main()
}
