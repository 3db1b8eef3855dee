//! The project a folder holds for `rigor init` (Cargo, Go, .NET, Node, Python, a Dockerfile,
//! or nothing it knows) and the release build, start command and port rigor would use for it.

use std::path::Path;

/// A project found in a folder: how to build it for release, start it and know it is ready.
#[derive(Debug, Clone, PartialEq)]
pub struct Project {
    /// What was recognised, for people: `a Cargo project (package \`hello\`)`.
    pub found: String,
    /// The port the application is told to listen on, by the ecosystem's custom.
    pub port: u16,
    pub build: Option<String>,
    pub artifact: Option<String>,
    pub command: String,
    pub env: Vec<(&'static str, String)>,
    pub configuration: Option<&'static str>,
    pub versions: Vec<(&'static str, String)>,
    /// What to check before the first run, each a comment above the application job.
    pub notes: Vec<String>,
}

/// The project of `dir`, tried in order: Cargo, Go, .NET, Node, Python, Dockerfile; a
/// placeholder to edit when none is there.
pub fn detect(dir: &Path) -> Project {
    cargo(dir)
        .or_else(|| go(dir))
        .or_else(|| dotnet(dir))
        .or_else(|| node(dir))
        .or_else(|| python(dir))
        .or_else(|| docker(dir))
        .unwrap_or_else(|| unknown(dir))
}

const PORT_NOTE: &str =
    "edit: how the server is told its port (here the PORT environment variable) if it reads another";

fn read(dir: &Path, name: &str) -> Option<String> {
    std::fs::read_to_string(dir.join(name)).ok()
}

/// The folder's own name, for a project that names itself nowhere.
fn folder_name(dir: &Path) -> String {
    dir.file_name()
        .and_then(|n| n.to_str())
        .filter(|n| !n.is_empty())
        .unwrap_or("app")
        .to_string()
}

/// A name fit for a path or an image tag: letters, digits, `-`, `_` and `.`, lower case.
fn tame(name: &str) -> String {
    let t: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    match t.trim_matches(['-', '.']) {
        "" => "app".to_string(),
        t => t.to_string(),
    }
}

fn port_env() -> Vec<(&'static str, String)> {
    vec![("PORT", "{{port}}".to_string())]
}

fn cargo(dir: &Path) -> Option<Project> {
    // A manifest that does not parse is still a Cargo project: cargo will say what is wrong.
    let manifest: toml::Table = read(dir, "Cargo.toml")?.parse().unwrap_or_default();
    let str_at = |v: Option<&toml::Value>| v.and_then(|v| v.as_str()).map(str::to_string);
    let bin = manifest
        .get("bin")
        .and_then(|b| b.as_array())
        .and_then(|b| str_at(b.first()?.get("name")));
    let package = str_at(manifest.get("package").and_then(|p| p.get("name")));
    let mut notes = vec![PORT_NOTE.to_string()];
    let (name, found) = match (bin, package) {
        (Some(bin), _) => (bin.clone(), format!("a Cargo project (binary `{bin}`)")),
        (None, Some(package)) => (
            package.clone(),
            format!("a Cargo project (package `{package}`)"),
        ),
        (None, None) => {
            notes.push("edit: the binary to start (Cargo.toml names none here)".to_string());
            let name = tame(&folder_name(dir));
            let found = if manifest.contains_key("workspace") {
                "a Cargo workspace"
            } else {
                "a Cargo project"
            };
            (name, found.to_string())
        }
    };
    let path = format!("{}/release/{name}", target_dir(dir));
    Some(Project {
        found,
        port: 8080,
        build: Some("cargo build --release".to_string()),
        artifact: Some(path.clone()),
        command: path,
        env: port_env(),
        configuration: Some("release"),
        versions: vec![("rustc", "rustc --version".to_string())],
        notes,
    })
}

/// Where cargo builds a package of `dir`: its own `target`, or its workspace's when a folder
/// above holds a `Cargo.toml` with `[workspace]`.
fn target_dir(dir: &Path) -> String {
    let mut up = String::new();
    for parent in dir.ancestors().skip(1) {
        up.push_str("../");
        let workspace = read(parent, "Cargo.toml")
            .and_then(|t| t.parse::<toml::Table>().ok())
            .is_some_and(|t| t.contains_key("workspace"));
        if workspace {
            return format!("{up}target");
        }
    }
    "target".to_string()
}

fn go(dir: &Path) -> Option<Project> {
    let module = read(dir, "go.mod")?;
    let path = module
        .lines()
        .find_map(|l| l.trim().strip_prefix("module "))
        .map(|m| m.trim().trim_matches('"').to_string());
    let name = tame(
        path.as_deref()
            .and_then(|p| p.rsplit('/').next())
            .unwrap_or(""),
    );
    // A main package under cmd/NAME is the usual layout when the root holds a library.
    let main = std::fs::read_dir(dir.join("cmd")).ok().and_then(|entries| {
        let mut dirs: Vec<String> = entries
            .flatten()
            .filter(|e| e.path().is_dir())
            .filter_map(|e| e.file_name().to_str().map(str::to_string))
            .collect();
        dirs.sort();
        dirs.into_iter().next()
    });
    let (package, name) = match main {
        Some(m) => (format!("./cmd/{m}"), tame(&m)),
        None => (".".to_string(), name),
    };
    Some(Project {
        found: format!(
            "a Go module (`{}`)",
            path.unwrap_or_else(|| "unnamed".to_string())
        ),
        port: 8080,
        build: Some(format!("go build -o bin/{name} {package}")),
        artifact: Some(format!("bin/{name}")),
        command: format!("./bin/{name}"),
        env: port_env(),
        configuration: Some("release"),
        versions: vec![("go", "go version".to_string())],
        notes: vec![PORT_NOTE.to_string()],
    })
}

fn dotnet(dir: &Path) -> Option<Project> {
    let mut projects: Vec<String> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter(|n| {
            [".csproj", ".fsproj", ".vbproj"]
                .iter()
                .any(|x| n.ends_with(x))
        })
        .collect();
    projects.sort();
    let project = projects.first()?;
    let name = project
        .rsplit_once('.')
        .map_or(project.as_str(), |(n, _)| n);
    let out = "bin/rigor-publish";
    let mut notes = vec![
        "edit: the URL the server listens on, if it does not read ASPNETCORE_URLS".to_string(),
    ];
    if projects.len() > 1 {
        notes.push(format!(
            "edit: the project to publish and start ({} are here)",
            projects.join(", ")
        ));
    }
    Some(Project {
        found: format!("a .NET project (`{project}`)"),
        port: 5000,
        build: Some(format!("dotnet publish {project} -c Release -o {out}")),
        artifact: Some(out.to_string()),
        command: format!("dotnet {out}/{name}.dll"),
        env: vec![
            ("ASPNETCORE_URLS", "http://127.0.0.1:{{port}}".to_string()),
            ("DOTNET_NOLOGO", "1".to_string()),
        ],
        configuration: Some("Release"),
        versions: vec![("dotnet", "dotnet --version".to_string())],
        notes,
    })
}

fn node(dir: &Path) -> Option<Project> {
    // A package.json that does not parse is still a Node project: npm will say what is wrong.
    let package: serde_json::Value =
        serde_json::from_str(&read(dir, "package.json")?).unwrap_or_default();
    let text = |v: &serde_json::Value| v.as_str().map(str::to_string);
    let name = package
        .get("name")
        .and_then(text)
        .unwrap_or_else(|| folder_name(dir));
    let scripts = package.get("scripts");
    let script = |s: &str| scripts.and_then(|v| v.get(s)).is_some();
    let install = if dir.join("package-lock.json").exists() {
        "npm ci"
    } else {
        "npm install"
    };
    let build = if script("build") {
        format!("{install} && npm run build")
    } else {
        install.to_string()
    };
    let command = match package.get("main").and_then(text) {
        Some(main) => format!("node {main}"),
        None if script("start") => "npm start".to_string(),
        None => "node index.js".to_string(),
    };
    Some(Project {
        found: format!("a Node project (`{name}`)"),
        port: 3000,
        build: Some(build),
        artifact: None,
        command,
        env: vec![
            ("NODE_ENV", "production".to_string()),
            ("PORT", "{{port}}".to_string()),
        ],
        configuration: None,
        versions: vec![("node", "node --version".to_string())],
        notes: vec![PORT_NOTE.to_string()],
    })
}

fn python(dir: &Path) -> Option<Project> {
    let markers = [
        "pyproject.toml",
        "requirements.txt",
        "setup.py",
        "Pipfile",
        "manage.py",
    ];
    let marker = markers.iter().find(|m| dir.join(m).exists())?;
    let deps = ["requirements.txt", "pyproject.toml", "Pipfile"]
        .iter()
        .filter_map(|f| read(dir, f))
        .collect::<String>()
        .to_lowercase();
    let build = if dir.join("requirements.txt").exists() {
        Some("python3 -m venv .venv && .venv/bin/pip install -q -r requirements.txt")
    } else if dir.join("pyproject.toml").exists() || dir.join("setup.py").exists() {
        Some("python3 -m venv .venv && .venv/bin/pip install -q .")
    } else {
        None
    };
    let python = if build.is_some() {
        ".venv/bin/python"
    } else {
        "python3"
    };
    // The script that starts the server, by the names it usually has (without `.py`).
    let entry = ["main", "app", "server", "wsgi"]
        .into_iter()
        .find(|stem| dir.join(format!("{stem}.py")).exists());
    let module = entry.unwrap_or("main");
    let mut notes = Vec::new();
    let command = if dir.join("manage.py").exists() {
        notes.push(
            "edit: Django's runserver is a development server; measure the one you deploy \
             (gunicorn, uvicorn) instead"
                .to_string(),
        );
        format!("{python} manage.py runserver 127.0.0.1:{{{{port}}}} --noreload")
    } else if deps.contains("uvicorn") || deps.contains("fastapi") {
        notes.push(format!(
            "edit: the module and application object (`{module}:app` here)"
        ));
        format!("{python} -m uvicorn {module}:app --host 127.0.0.1 --port {{{{port}}}}")
    } else if deps.contains("gunicorn") || deps.contains("flask") {
        notes.push(format!(
            "edit: the module and application object (`{module}:app` here)"
        ));
        format!("{python} -m gunicorn -b 127.0.0.1:{{{{port}}}} {module}:app")
    } else {
        notes.push(PORT_NOTE.to_string());
        if entry.is_none() {
            notes.push("edit: the script that starts the server".to_string());
        }
        format!("{python} {module}.py")
    };
    Some(Project {
        found: format!("a Python project (`{marker}`)"),
        port: 8000,
        build: build.map(str::to_string),
        artifact: None,
        command,
        env: vec![
            ("PORT", "{{port}}".to_string()),
            ("PYTHONDONTWRITEBYTECODE", "1".to_string()),
        ],
        configuration: None,
        versions: vec![("python", format!("{python} --version"))],
        notes,
    })
}

fn docker(dir: &Path) -> Option<Project> {
    let dockerfile = read(dir, "Dockerfile")?;
    let exposed = dockerfile
        .lines()
        .filter_map(|l| {
            let (word, rest) = l.trim().split_once(char::is_whitespace)?;
            word.eq_ignore_ascii_case("EXPOSE").then_some(rest)
        })
        .flat_map(str::split_whitespace)
        .find_map(|p| p.split('/').next()?.parse::<u16>().ok());
    let inner = exposed.unwrap_or(8080);
    let image = format!("rigor-{}", tame(&folder_name(dir)));
    let mut notes = vec![
        "rigor measures the processes it starts: here the docker client, not the container; \
         for the application's own CPU and memory run its server directly"
            .to_string(),
    ];
    if exposed.is_none() {
        notes.push("edit: the port the container listens on (8080 here)".to_string());
    }
    Some(Project {
        found: format!("a Dockerfile (container port {inner})"),
        port: 8080,
        build: Some(format!("docker build -q -t {image} .")),
        artifact: None,
        command: format!("docker run --rm --init -p 127.0.0.1:{{{{port}}}}:{inner} {image}"),
        env: Vec::new(),
        configuration: None,
        versions: vec![("docker", "docker --version".to_string())],
        notes,
    })
}

fn unknown(dir: &Path) -> Project {
    Project {
        found: format!(
            "no project rigor recognises in `{}` (Cargo.toml, go.mod, *.csproj, package.json, \
             pyproject.toml, requirements.txt, Dockerfile)",
            folder_name(dir)
        ),
        port: 8080,
        build: None,
        artifact: None,
        command: "./server".to_string(),
        env: port_env(),
        configuration: None,
        versions: Vec::new(),
        notes: vec![
            "edit: the build (`build = \"…\"`) and the command that starts your server".to_string(),
            PORT_NOTE.to_string(),
        ],
    }
}
