//! The container keys: resolved into the application's `container`, variants by image, and
//! each misuse named by table and key.

use super::*;
use std::path::Path;

const BASE: &str = r#"
[jobs.app]
image = "localhost/srv:{{tag}}"
engine = "podman"
publish = ["127.0.0.1:{{port}}:80"]
container_args = ["--memory", "512m"]
env = { MODE = "fast" }

[jobs.load]
url = "http://127.0.0.1:8080/"

[scenarios.s]
application = "app"
load = "load"
variables = { tag = "1", port = 8080 }

[scenarios.s.variants.one]
[scenarios.s.variants.two]
image = "localhost/srv:2"

[profiles.local]
"#;

fn req() -> PlanRequest {
    PlanRequest {
        profile: "local".into(),
        ..Default::default()
    }
}

fn plan(text: &str) -> Result<ScenarioPlan, String> {
    let config = Config::parse(Path::new("/tmp/x/rigor.toml"), text.to_string())
        .map_err(|p| p.to_string())?;
    config.plan("s", &req()).map_err(|p| p.to_string())
}

#[test]
fn an_image_job_resolves_with_its_variants_images() {
    let plan = plan(BASE).unwrap();
    let images: Vec<ImageSource> = plan
        .rows
        .iter()
        .map(|r| r.app.container.as_ref().unwrap().image.clone())
        .collect();
    assert_eq!(
        images,
        [
            ImageSource::Named("localhost/srv:1".into()),
            ImageSource::Named("localhost/srv:2".into())
        ]
    );
    let c = plan.rows[0].app.container.as_ref().unwrap();
    assert_eq!(c.engine, Some(EngineKind::Podman));
    assert_eq!(c.publish, ["127.0.0.1:8080:80"]);
    assert_eq!(c.args, ["--memory", "512m"]);
    assert_eq!(plan.rows[0].app.command, "", "the image's own command");
    assert!(!plan.rows[0].work.load().unwrap().in_container);
}

#[test]
fn misused_container_keys_are_named_by_key() {
    let cases = [
        (
            BASE.replace("engine = \"podman\"", "engine = \"lxc\""),
            "jobs.app.engine",
            "not an engine",
        ),
        (
            BASE.replace("engine = \"podman\"", "dockerfile = \"Dockerfile\""),
            "jobs.app.image",
            "not both",
        ),
        (
            BASE.replace("url = \"http://127.0.0.1:8080/\"", "url = \"http://127.0.0.1:8080/\"\nnetwork = \"bridge\""),
            "jobs.load.network",
            "is `container`",
        ),
        (
            BASE.replace("image = \"localhost/srv:{{tag}}\"", "command = \"srv\"")
                .replace("image = \"localhost/srv:2\"", ""),
            "jobs.app.publish",
            "only a container application",
        ),
        (
            BASE.replace("image = \"localhost/srv:{{tag}}\"", "command = \"srv\"")
                .replace("image = \"localhost/srv:2\"", "")
                .replace("publish = [\"127.0.0.1:{{port}}:80\"]\ncontainer_args = [\"--memory\", \"512m\"]\nengine = \"podman\"", "")
                .replace("engine = \"podman\"\n", "")
                .replace("publish = [\"127.0.0.1:{{port}}:80\"]\n", "")
                .replace("container_args = [\"--memory\", \"512m\"]\n", "")
                + "",
            "",
            "",
        ),
        (
            BASE.replace("image = \"localhost/srv:{{tag}}\"", "image = \"two words\""),
            "jobs.app.image",
            "not an image name",
        ),
        (
            BASE.replace("engine = \"podman\"", "build = \"make\""),
            "jobs.app.build",
            "built by its engine",
        ),
    ];
    for (text, key, says) in cases {
        match plan(&text) {
            Ok(_) => assert!(key.is_empty(), "{key}: accepted\n{text}"),
            Err(e) => assert!(e.contains(key) && e.contains(says), "{key}: {e}"),
        }
    }
}

#[test]
fn the_load_in_the_container_needs_a_container_application() {
    let in_container = BASE.replace(
        "url = \"http://127.0.0.1:8080/\"",
        "url = \"http://127.0.0.1:80/\"\nnetwork = \"container\"",
    );
    let plan_ok = plan(&in_container).unwrap();
    assert!(plan_ok.rows[0].work.load().unwrap().in_container);
    let host_app = in_container
        .replace("image = \"localhost/srv:{{tag}}\"", "command = \"srv\"")
        .replace("image = \"localhost/srv:2\"", "")
        .replace("engine = \"podman\"\n", "")
        .replace("publish = [\"127.0.0.1:{{port}}:80\"]\n", "")
        .replace("container_args = [\"--memory\", \"512m\"]\n", "");
    let e = plan(&host_app).unwrap_err();
    assert!(
        e.contains("jobs.load") && e.contains("network") && e.contains("is no container"),
        "{e}"
    );
}

/// [`BASE`] with the application on host `app1`.
fn on_host(text: &str) -> String {
    text.replace(
        "[profiles.local]",
        "[hosts.app1]\nssh = \"root@app1\"\n\n[profiles.local]\napplication = { host = \"app1\" }",
    )
}

#[test]
fn an_image_on_a_host_runs_there_and_what_cannot_travel_is_named() {
    let resolved = plan(&on_host(BASE)).unwrap();
    let app = &resolved.rows[0].app;
    assert_eq!(app.host.as_ref().map(|h| h.name.as_str()), Some("app1"));
    assert!(app.container.is_some());
    // Only the job's folder reaches the host: a Dockerfile outside it cannot.
    let dir = std::env::temp_dir().join(format!("rigor-ctr-host-{}", std::process::id()));
    let inside = dir.join("app");
    std::fs::create_dir_all(&inside).unwrap();
    std::fs::write(dir.join("Dockerfile"), "FROM scratch\n").unwrap();
    std::fs::write(inside.join("Dockerfile"), "FROM scratch\n").unwrap();
    let built = |file: &str| {
        on_host(BASE)
            .replace(
                "image = \"localhost/srv:{{tag}}\"",
                &format!(
                    "dir = {:?}\ndockerfile = {file:?}",
                    inside.display().to_string()
                ),
            )
            .replace("image = \"localhost/srv:2\"", "")
    };
    let ok = plan(&built("Dockerfile")).unwrap();
    assert!(matches!(
        ok.rows[0].app.container.as_ref().unwrap().image,
        ImageSource::Built { .. }
    ));
    let e = plan(&built("../Dockerfile")).unwrap_err();
    assert!(
        e.contains("jobs.app.dockerfile") && e.contains("only that folder reaches host `app1`"),
        "{e}"
    );
    // The load cannot enter a container on another host.
    let e = plan(&on_host(&BASE.replace(
        "url = \"http://127.0.0.1:8080/\"",
        "url = \"http://127.0.0.1:8080/\"\nnetwork = \"container\"",
    )))
    .unwrap_err();
    assert!(
        e.contains("jobs.load.network") && e.contains("runs on host `app1`"),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn container_args_that_take_over_rigors_name_or_attached_client_are_refused() {
    for (arg, says) in [
        ("\"--name\", \"x\"", "\"--name\" is rigor's to set"),
        ("\"--name=x\"", "\"--name=x\" is rigor's to set"),
        ("\"-d\"", "\"-d\" is rigor's to set"),
        ("\"--detach=true\"", "runs attached"),
        ("\"-dit\"", "\"-dit\" is rigor's to set"),
        ("\"--help\"", "engine's help"),
        ("\"\"", "an empty argument"),
    ] {
        let text = BASE.replace("\"--memory\", \"512m\"", arg);
        let e = plan(&text).unwrap_err();
        assert!(
            e.contains("jobs.app.container_args") && e.contains(says),
            "{arg}: {e}"
        );
    }
    // What is the user's to choose stays: limits, a hostname (`-h`), `-it`, `--rm`.
    for arg in [
        "\"--memory\", \"512m\"",
        "\"-h\", \"srv\"",
        "\"-it\"",
        "\"--rm\"",
        "\"--cpus=2\"",
    ] {
        let text = BASE.replace("\"--memory\", \"512m\"", arg);
        assert!(plan(&text).is_ok(), "{arg}: {:?}", plan(&text).err());
    }
}
