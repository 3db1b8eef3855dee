//! Applications shipped as container images: the engine behind one small interface, the
//! image as the build, a fresh container per iteration measured from the host, the label
//! sweep, and the load inside the container's network namespace.

mod client;
mod detect;
mod engine;
pub mod image;
mod netns;
mod network;
mod start;
mod sweep;

pub use image::BuiltImage;
pub use netns::{enter, inside};
pub use network::{own_network, proxy_guard, reserves_port};
pub use start::{launch, launch_image};

/// Removes what a rigor that is gone left of its containers on `image`'s engine (once per run),
/// before anything is checked about the start: a left container may hold the very port the
/// application publishes. The ids of those removed.
pub fn sweep_left(image: &BuiltImage) -> anyhow::Result<Vec<String>> {
    sweep::once(&image.engine)
}

/// What the environment records of a container job: its engine and the engine's version
/// (or why no engine answers), and its image as written.
pub fn environment(c: &crate::config::ContainerJob) -> serde_json::Value {
    let mut v = written(c);
    let engine = match detect::engine(c.engine) {
        Ok((e, version)) => serde_json::json!({
            "engine": e.program(),
            "engine_version": version,
        }),
        Err(e) => serde_json::json!({ "engine_error": format!("{e:#}") }),
    };
    if let (Some(v), serde_json::Value::Object(e)) = (v.as_object_mut(), engine) {
        v.extend(e);
    }
    v
}

/// A container job's image as written, without asking any engine.
pub fn written(c: &crate::config::ContainerJob) -> serde_json::Value {
    let image = match &c.image {
        crate::config::ImageSource::Named(n) => n.clone(),
        crate::config::ImageSource::Built { dockerfile, .. } => dockerfile.display().to_string(),
    };
    serde_json::json!({ "image": image })
}

/// The network namespace of the running container `name`, through the first engine that
/// answers: where `rigor load --network container:NAME` runs its engine.
pub fn netns_of(name: &str) -> anyhow::Result<std::fs::File> {
    let (engine, _) = detect::engine(None)?;
    let pid = client::call(
        &engine,
        &engine.init_pid(name),
        std::time::Duration::from_secs(30),
    )
    .map_err(|e| anyhow::anyhow!("container {name}: {e}"))?;
    match pid.parse::<i32>() {
        Ok(p) if p > 0 => netns::of_process(p),
        _ => Err(anyhow::anyhow!(
            "container {name} is not running ({} says its first process is {pid:?})",
            engine.program()
        )),
    }
}
