//! An nginx of the test's own: its config, logs and certificates in a private folder, on a free
//! loopback port, stopped when dropped. Tests that need it skip (`test-skip: needs nginx`)
//! where nginx is not installed.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running nginx; its access log counts the requests it answered.
pub struct Nginx {
    child: Child,
    dir: PathBuf,
    pub addr: SocketAddr,
}

/// Whether nginx can be run here.
pub fn available() -> bool {
    Command::new("nginx")
        .arg("-v")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// Writes `dir/nginx.conf` for an nginx in the foreground with everything (pid, logs, temp
/// folders) under `dir`: `http` directives added to the `http` block, and `server` (the body of
/// its `server { … }` block, `{port}` and `{dir}` replaced). Returns the command line that
/// starts it, for an application job that runs nginx itself; its access log is
/// `dir/access.log`.
pub fn write_config(dir: &Path, port: u16, http: &str, server: &str) -> String {
    std::fs::create_dir_all(dir.join("tmp")).unwrap();
    let d = dir.display().to_string();
    let server = server
        .replace("{port}", &port.to_string())
        .replace("{dir}", &d);
    let conf = format!(
        "worker_processes 1;\ndaemon off;\npid {d}/nginx.pid;\nerror_log {d}/error.log warn;\n\
         events {{ worker_connections 4096; }}\n\
         http {{\n    access_log {d}/access.log;\n    client_body_temp_path {d}/tmp/body;\n\
         proxy_temp_path {d}/tmp/proxy;\n    fastcgi_temp_path {d}/tmp/fastcgi;\n\
         uwsgi_temp_path {d}/tmp/uwsgi;\n    scgi_temp_path {d}/tmp/scgi;\n    {http}\n\
         server {{\n{server}\n}}\n}}\n"
    );
    std::fs::write(dir.join("nginx.conf"), conf).unwrap();
    format!("nginx -p {d} -e {d}/error.log -c {d}/nginx.conf")
}

impl Nginx {
    /// Starts nginx in a fresh folder named after `name`, with `server` (the body of its
    /// `server { … }` block, `{port}` and `{dir}` replaced) and `http` directives added to the
    /// `http` block. `files` are written into the folder first (certificates, keys).
    pub fn start(name: &str, http: &str, server: &str, files: &[(&str, &str)]) -> Nginx {
        let dir = std::env::temp_dir().join(format!("rigor-nginx-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for (file, text) in files {
            std::fs::write(dir.join(file), text).unwrap();
        }
        let port = free_port();
        write_config(&dir, port, http, server);
        let child = Command::new("nginx")
            .arg("-p")
            .arg(&dir)
            .arg("-e")
            .arg(dir.join("error.log"))
            .arg("-c")
            .arg(dir.join("nginx.conf"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start nginx");
        let addr: SocketAddr = ([127, 0, 0, 1], port).into();
        let nginx = Nginx { child, dir, addr };
        let start = Instant::now();
        while TcpStream::connect_timeout(&addr, Duration::from_millis(100)).is_err() {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "nginx did not listen on {addr}: {}",
                std::fs::read_to_string(nginx.dir.join("error.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        nginx
    }

    /// The folder holding its config, logs and files.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Requests nginx logged (one access-log line each), by status.
    pub fn logged(&self, status: u16) -> usize {
        let log = std::fs::read_to_string(self.dir.join("access.log")).unwrap_or_default();
        let needle = format!("\" {status} ");
        log.lines().filter(|l| l.contains(&needle)).count()
    }

    /// All requests nginx logged.
    pub fn logged_all(&self) -> usize {
        let log = std::fs::read_to_string(self.dir.join("access.log")).unwrap_or_default();
        log.lines().count()
    }

    /// Waits until nginx has logged `n` requests or `limit` passed (its worker writes each
    /// line after the response went out, so the last ones may lag the client a little).
    pub fn settle(&self, n: usize, limit: Duration) -> usize {
        let start = Instant::now();
        loop {
            let got = self.logged_all();
            if got >= n || start.elapsed() > limit {
                return got;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        // SIGTERM: the master stops its workers and waits for them (SIGKILL would orphan them).
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
