//! A fixed network delay without netem: an iptables rule hands every packet a host sends to an
//! NFQUEUE, and a thread here accepts each one only once it has waited the delay. Packets keep
//! their order (they are released in the order they came). With `--queue-bypass` in the rule, a
//! queue nobody reads lets packets through, so a stopped delayer never cuts a host off.

use std::collections::VecDeque;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const NETLINK_NETFILTER: i32 = 12;
const NFNL_SUBSYS_QUEUE: u16 = 3;
const NFQNL_MSG_PACKET: u16 = 0;
const NFQNL_MSG_VERDICT: u16 = 1;
const NFQNL_MSG_CONFIG: u16 = 2;
const NFQA_PACKET_HDR: u16 = 1;
const NFQA_VERDICT_HDR: u16 = 2;
const NFQA_CFG_CMD: u16 = 1;
const NFQA_CFG_PARAMS: u16 = 2;
const NFQA_CFG_QUEUE_MAXLEN: u16 = 3;
const NFQNL_CFG_CMD_BIND: u8 = 1;
const NFQNL_COPY_META: u8 = 1;
const NF_ACCEPT: u32 = 1;
const NLM_F_REQUEST: u16 = 1;

/// A running delayer; dropping it stops it (packets then bypass the queue).
pub struct Delayer {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for Delayer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Delayer {
    /// Reads queue `queue` of the network namespace at `netns` and releases each packet `delay`
    /// after it came; `Err` when the queue cannot be bound.
    pub fn start(netns: &str, queue: u16, delay: Duration) -> anyhow::Result<Delayer> {
        let ns = std::fs::File::open(netns).map_err(|e| anyhow::anyhow!("{netns}: {e}"))?;
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = std::sync::mpsc::channel();
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let bound = nix::sched::setns(&ns, nix::sched::CloneFlags::CLONE_NEWNET)
                .map_err(|e| anyhow::anyhow!("setns: {e}"))
                .and_then(|()| bind(queue));
            match bound {
                Ok(sock) => {
                    let _ = tx.send(Ok(()));
                    serve(&sock, queue, delay, &flag);
                }
                Err(e) => {
                    let _ = tx.send(Err(e));
                }
            }
        });
        rx.recv()
            .map_err(|_| anyhow::anyhow!("the delayer thread died"))??;
        Ok(Delayer {
            stop,
            thread: Some(thread),
        })
    }
}

fn put_attr(buf: &mut Vec<u8>, kind: u16, data: &[u8]) {
    let len = 4 + data.len();
    buf.extend_from_slice(&(len as u16).to_ne_bytes());
    buf.extend_from_slice(&kind.to_ne_bytes());
    buf.extend_from_slice(data);
    while !buf.len().is_multiple_of(4) {
        buf.push(0);
    }
}

/// One netfilter-queue message: netlink header, nfgenmsg for `queue`, then `attrs`.
fn message(kind: u16, queue: u16, attrs: &[(u16, Vec<u8>)]) -> Vec<u8> {
    let mut body = vec![0u8, 0u8];
    body.extend_from_slice(&queue.to_be_bytes());
    for (k, d) in attrs {
        put_attr(&mut body, *k, d);
    }
    let mut msg = Vec::with_capacity(16 + body.len());
    msg.extend_from_slice(&((16 + body.len()) as u32).to_ne_bytes());
    msg.extend_from_slice(&((NFNL_SUBSYS_QUEUE << 8) | kind).to_ne_bytes());
    msg.extend_from_slice(&NLM_F_REQUEST.to_ne_bytes());
    msg.extend_from_slice(&0u32.to_ne_bytes());
    msg.extend_from_slice(&0u32.to_ne_bytes());
    msg.extend_from_slice(&body);
    msg
}

fn send(sock: &OwnedFd, msg: &[u8]) -> anyhow::Result<()> {
    let mut addr: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
    addr.nl_family = libc::AF_NETLINK as u16;
    // SAFETY: a valid socket, a buffer of the length given and a sockaddr_nl.
    let n = unsafe {
        libc::sendto(
            sock.as_raw_fd(),
            msg.as_ptr().cast(),
            msg.len(),
            0,
            (&addr as *const libc::sockaddr_nl).cast(),
            std::mem::size_of::<libc::sockaddr_nl>() as u32,
        )
    };
    if n < 0 {
        anyhow::bail!("netlink send: {}", std::io::Error::last_os_error());
    }
    Ok(())
}

/// A netfilter netlink socket bound to queue `queue`, copying packet metadata only.
fn bind(queue: u16) -> anyhow::Result<OwnedFd> {
    // SAFETY: plain socket creation; the descriptor is owned right away.
    let fd = unsafe {
        libc::socket(
            libc::AF_NETLINK,
            libc::SOCK_RAW | libc::SOCK_CLOEXEC,
            NETLINK_NETFILTER,
        )
    };
    if fd < 0 {
        anyhow::bail!("netlink socket: {}", std::io::Error::last_os_error());
    }
    // SAFETY: fd is a fresh descriptor nobody else owns.
    let sock = unsafe { OwnedFd::from_raw_fd(fd) };
    let tv = libc::timeval {
        tv_sec: 0,
        tv_usec: 1000,
    };
    // SAFETY: a valid socket and a timeval of the size given.
    unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_RCVTIMEO,
            (&tv as *const libc::timeval).cast(),
            std::mem::size_of::<libc::timeval>() as u32,
        );
    }
    let mut cmd = vec![NFQNL_CFG_CMD_BIND, 0];
    cmd.extend_from_slice(&(libc::AF_INET as u16).to_be_bytes());
    let mut params = 0u32.to_be_bytes().to_vec();
    params.push(NFQNL_COPY_META);
    send(
        &sock,
        &message(
            NFQNL_MSG_CONFIG,
            queue,
            &[
                (NFQA_CFG_CMD, cmd),
                (NFQA_CFG_PARAMS, params),
                (NFQA_CFG_QUEUE_MAXLEN, 65536u32.to_be_bytes().to_vec()),
            ],
        ),
    )?;
    Ok(sock)
}

/// The packet ids in a buffer of netlink messages.
fn packet_ids(buf: &[u8]) -> Vec<u32> {
    let mut ids = Vec::new();
    let mut at = 0;
    while at + 16 <= buf.len() {
        let len = u32::from_ne_bytes(buf[at..at + 4].try_into().unwrap()) as usize;
        let kind = u16::from_ne_bytes(buf[at + 4..at + 6].try_into().unwrap());
        if len < 16 || at + len > buf.len() {
            break;
        }
        if kind == (NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET {
            let mut a = at + 16 + 4;
            while a + 4 <= at + len {
                let alen = u16::from_ne_bytes(buf[a..a + 2].try_into().unwrap()) as usize;
                let akind = u16::from_ne_bytes(buf[a + 2..a + 4].try_into().unwrap()) & 0x3fff;
                if alen < 4 {
                    break;
                }
                if akind == NFQA_PACKET_HDR && alen >= 8 {
                    ids.push(u32::from_be_bytes(buf[a + 4..a + 8].try_into().unwrap()));
                }
                a += (alen + 3) & !3;
            }
        }
        at += (len + 3) & !3;
    }
    ids
}

fn serve(sock: &OwnedFd, queue: u16, delay: Duration, stop: &AtomicBool) {
    let mut buf = vec![0u8; 1 << 16];
    let mut held: VecDeque<(Instant, u32)> = VecDeque::new();
    let verdict = |id: u32| {
        let mut v = NF_ACCEPT.to_be_bytes().to_vec();
        v.extend_from_slice(&id.to_be_bytes());
        let _ = send(
            sock,
            &message(NFQNL_MSG_VERDICT, queue, &[(NFQA_VERDICT_HDR, v)]),
        );
    };
    while !stop.load(Ordering::SeqCst) {
        // SAFETY: a valid socket and a buffer of the length given.
        let n = unsafe { libc::recv(sock.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
        let now = Instant::now();
        if n > 0 {
            for id in packet_ids(&buf[..n as usize]) {
                held.push_back((now + delay, id));
            }
        }
        while let Some(&(due, id)) = held.front() {
            if due > Instant::now() {
                break;
            }
            held.pop_front();
            verdict(id);
        }
    }
    // Whatever is still held goes now.
    for (_, id) in held {
        verdict(id);
    }
}
