#!/usr/bin/env python3
"""Checks the Kubernetes manifests in this folder against the server they deploy (no cluster needed).

  python3 deploy/kubernetes/test-manifests.py [HELP_FILE]

HELP_FILE is the output of `iqstream serve --help` (default: runs `java -jar server/target/iqstream-server.jar
--help`). Checks: every manifest parses; every IQSTREAM_* variable and --flag the StatefulSet sets is one the server
has, and every $(VAR) it uses is defined before; the StatefulSet: its governing Service is the headless one (which
publishes pods that are not ready), a PersistentVolumeClaim template mounted at the data directory the env (or the
image) gives --data-dir, disk durability, fsGroup = the image's group, --advertise the pod's own DNS name and --peers
every ordinal's name, as many as the replicas, on the http port, the cluster secret from a Secret; the ports the env sets are the container ports the probes and Services use; readiness on /readyz and liveness
on /healthz; the grace period covers the preStop pause plus the drain timeout; a memory limit (= request); non-root
as the image's user, read-only root with /tmp from an emptyDir; no service-link env; the JWT secret from the
Secret of secret.example.yaml; the image tag is the project's version; selectors match; the headless Service,
PodDisruptionBudget and kustomization are whole. Needs PyYAML (installed with pip when missing); without it prints
"test-manifests: SKIP: <why>" and exits 77, which scripts/test-all.sh reports as skipped (a failure under CI=true
unless IQSTREAM_TEST_SKIPPABLE names k8s). Exits 1 listing every problem found.
"""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

try:
    import yaml
except ImportError:
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "pyyaml"], check=False,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        import yaml
    except ImportError:
        print("test-manifests: SKIP: PyYAML is not installed and pip could not install it")
        sys.exit(77)  # "skipped" to scripts/test-all.sh, never "passed"

problems = []


def check(cond, msg):
    if not cond:
        problems.append(msg)
    return cond


def duration_s(text):
    m = re.fullmatch(r"(\d+)(ms|s|m|h)?", text.strip())
    if not m:
        raise ValueError(f"not a duration: {text}")
    n, unit = int(m.group(1)), m.group(2) or "s"
    return n * {"ms": 0.001, "s": 1, "m": 60, "h": 3600}[unit]


def mem_bytes(text):
    m = re.fullmatch(r"(\d+)(Ki|Mi|Gi|Ti)?", str(text))
    if not m:
        raise ValueError(f"not a quantity: {text}")
    return int(m.group(1)) * {None: 1, "Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40}[m.group(2)]


def server_help():
    if len(sys.argv) > 1:
        with open(sys.argv[1], encoding="utf-8") as f:
            return f.read()
    jar = os.environ.get("IQSTREAM_JAR", os.path.join(ROOT, "server/target/iqstream-server.jar"))
    java = os.path.join(os.environ["JAVA_HOME"], "bin/java") if os.environ.get("JAVA_HOME") else "java"
    return subprocess.run([java, "-jar", jar, "--help"], check=True, capture_output=True, text=True).stdout


def load_all():
    docs = {}
    for name in sorted(os.listdir(HERE)):
        if name.endswith(".yaml"):
            with open(os.path.join(HERE, name), encoding="utf-8") as f:
                docs[name] = [d for d in yaml.safe_load_all(f) if d is not None]
    return docs


def one(docs, kind, name=None):
    found = [d for ds in docs.values() for d in ds
             if d.get("kind") == kind and (name is None or d["metadata"]["name"] == name)]
    check(len(found) == 1, f"expected one {kind} {name or ''}, found {len(found)}")
    return found[0] if found else {}


def selects(selector, labels):
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def main():
    help_text = server_help()
    flags = set(re.findall(r"^\s+(--[a-z0-9-]+)", help_text, re.M))
    envs = set(re.findall(r"\b(IQSTREAM_[A-Z0-9_]+)\b", help_text))
    if not (flags and envs):
        sys.exit("test-manifests: could not read flags from --help")
    docs = load_all()
    dep = one(docs, "StatefulSet", "iqstream")
    pod = dep["spec"]["template"]["spec"]
    pod_labels = dep["spec"]["template"]["metadata"]["labels"]
    check(selects(dep["spec"]["selector"]["matchLabels"], pod_labels), "StatefulSet selector misses its pods")
    (c,) = [x for x in pod["containers"] if x["name"] == "iqstream"]

    # flags and environment
    env = {e["name"]: e for e in c.get("env", [])}
    for name in env:
        check(not name.startswith("IQSTREAM_") or name in envs, f"env {name}: the server has no such variable")
    defined = set()
    for e in c.get("env", []):
        for ref in re.findall(r"\$\(([A-Za-z0-9_]+)\)", e.get("value", "")):
            check(ref in defined, f"env {e['name']} uses $({ref}), not defined before it (Kubernetes leaves it as is)")
        defined.add(e["name"])
    for arg in c.get("args", []) + c.get("command", []):
        if arg.startswith("--"):
            check(arg.split("=")[0] in flags, f"arg {arg}: the server has no such flag")
    check(pod.get("enableServiceLinks") is False,
          "enableServiceLinks must be false (a Service named iqstream injects IQSTREAM_PORT=tcp://...)")

    # ports
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    check(str(ports.get("http")) == env.get("IQSTREAM_PORT", {}).get("value"), "port http != IQSTREAM_PORT")
    admin = env.get("IQSTREAM_ADMIN_PORT", {}).get("value")
    check(admin is None or str(ports.get("admin")) == admin, "port admin != IQSTREAM_ADMIN_PORT")
    probe_port = "admin" if admin else "http"
    for probe, path in (("readinessProbe", "/readyz"), ("livenessProbe", "/healthz")):
        get = c.get(probe, {}).get("httpGet", {})
        check(get.get("path") == path, f"{probe} must GET {path}, has {get.get('path')}")
        check(get.get("port") == probe_port, f"{probe} port {get.get('port')}, expected {probe_port}")
    if "startupProbe" in c:
        check(c["startupProbe"]["httpGet"].get("port") in ports, "startupProbe on an unknown port")

    # stop = drain
    drain_s = duration_s(env.get("IQSTREAM_DRAIN_TIMEOUT", {}).get("value", "60s"))
    pre = c.get("lifecycle", {}).get("preStop", {})
    pause_s = pre.get("sleep", {}).get("seconds", 0)
    cmd = pre.get("exec", {}).get("command", [])
    if len(cmd) == 2 and cmd[0] == "sleep":
        pause_s = duration_s(cmd[1])
    check(pre, "no preStop hook")
    grace = pod.get("terminationGracePeriodSeconds", 30)
    check(grace > pause_s + drain_s, f"terminationGracePeriodSeconds {grace} <= preStop {pause_s}s + drain {drain_s}s")

    # memory sizing
    res = c.get("resources", {})
    limit = res.get("limits", {}).get("memory")
    if check(limit is not None, "no memory limit: the server sizes itself from it"):
        check(mem_bytes(limit) >= 256 << 20, f"memory limit {limit} below 256Mi")
        check(res.get("requests", {}).get("memory") == limit, "memory request != limit")

    # security
    with open(os.path.join(ROOT, "Dockerfile"), encoding="utf-8") as f:
        dockerfile = f.read()
    user = re.search(r"^USER (\d+)(?::(\d+))?", dockerfile, re.M)
    psc, csc = pod.get("securityContext", {}), c.get("securityContext", {})
    check(psc.get("runAsNonRoot") is True, "runAsNonRoot not set")
    check(user and psc.get("runAsUser") == int(user.group(1)), "runAsUser is not the image's USER")
    group = int(user.group(2) or user.group(1)) if user else None
    check(psc.get("runAsGroup") == group, f"runAsGroup {psc.get('runAsGroup')} is not the image's group {group}")
    check(psc.get("fsGroup") == group, f"fsGroup {psc.get('fsGroup')} is not the image's group {group}: the user "
          "could not write a fresh volume")
    check(csc.get("readOnlyRootFilesystem") is True, "root filesystem not read-only")
    check(csc.get("allowPrivilegeEscalation") is False, "allowPrivilegeEscalation not false")
    check("ALL" in csc.get("capabilities", {}).get("drop", []), "capabilities not dropped")
    vols = {v["name"]: v for v in pod.get("volumes", [])}
    tmp = [m for m in c.get("volumeMounts", []) if m["mountPath"] == "/tmp"]
    check(tmp and "emptyDir" in vols.get(tmp[0]["name"], {}), "/tmp is not an emptyDir (read-only root)")
    for port in ports.values():
        check(re.search(rf"^EXPOSE .*\b{port}\b", dockerfile, re.M), f"Dockerfile does not EXPOSE {port}")

    # the secrets
    for var in ("IQSTREAM_JWT_SECRET", "IQSTREAM_CLUSTER_SECRET"):
        ref = env.get(var, {}).get("valueFrom", {}).get("secretKeyRef", {})
        secret = one(docs, "Secret", ref.get("name"))
        check(ref.get("key") in secret.get("stringData", {}), f"{var}: secretKeyRef key not in secret.example.yaml")
        check(not ref.get("optional"), f"{var}: the secret must not be optional (no JWT secret: dev mode)")
        check("value" not in env.get(var, {}), f"{var}: secret written in the manifest")

    # the disk: a claim per pod, mounted where --data-dir points
    data_flag = "--data-dir" in flags and "IQSTREAM_DATA_DIR" in envs
    check(data_flag, "the server has no --data-dir / IQSTREAM_DATA_DIR")
    image_dir = re.search(r"IQSTREAM_DATA_DIR=(\S+)", dockerfile)
    data_dir = env.get("IQSTREAM_DATA_DIR", {}).get("value") or (image_dir and image_dir.group(1))
    check(image_dir and data_dir == image_dir.group(1),
          f"data dir {data_dir} is not the image's IQSTREAM_DATA_DIR {image_dir and image_dir.group(1)}")
    check(env.get("IQSTREAM_DURABILITY", {}).get("value", "disk") == "disk", "IQSTREAM_DURABILITY is not disk")
    claims = {t["metadata"]["name"]: t for t in dep["spec"].get("volumeClaimTemplates", [])}
    mounts = [m for m in c.get("volumeMounts", []) if m["mountPath"] == data_dir]
    if check(len(mounts) == 1, f"no single volume mounted at the data dir {data_dir}"):
        claim = claims.get(mounts[0]["name"])
        check(claim is not None and mounts[0]["name"] not in vols,
              f"the data dir's volume {mounts[0]['name']} is not a volumeClaimTemplate (a pod volume dies with the pod)")
        check(not mounts[0].get("readOnly") and not mounts[0].get("subPath"), "the data dir is mounted read-only or "
              "as a subPath")
        if claim:
            spec = claim.get("spec", {})
            check(spec.get("accessModes") == ["ReadWriteOnce"], f"claim {mounts[0]['name']}: accessModes "
                  f"{spec.get('accessModes')}, expected [ReadWriteOnce] (a node's data directory is its own)")
            size = spec.get("resources", {}).get("requests", {}).get("storage")
            check(size is not None and mem_bytes(size) >= 1 << 30, f"claim {mounts[0]['name']}: storage {size} < 1Gi")
    retain = dep["spec"].get("persistentVolumeClaimRetentionPolicy", {})
    check(retain.get("whenScaled", "Retain") == "Retain" and retain.get("whenDeleted", "Retain") == "Retain",
          f"claims are deleted with their pods ({retain}): a node's streams would go with a scale-in")

    # the cluster: each pod advertises its own DNS name, and lists every ordinal's
    http_port = ports.get("http")
    headless = dep["spec"].get("serviceName")
    field = {n: e.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") for n, e in env.items()}
    check(field.get("POD_NAME") == "metadata.name" and field.get("POD_NAMESPACE") == "metadata.namespace",
          "POD_NAME / POD_NAMESPACE are not the pod's metadata.name / metadata.namespace")
    dns = f"{headless}.$(POD_NAMESPACE).svc.cluster.local:{http_port}"
    advertise = env.get("IQSTREAM_ADVERTISE", {}).get("value")
    check(advertise == f"$(POD_NAME).{dns}", f"IQSTREAM_ADVERTISE {advertise}, expected $(POD_NAME).{dns}")
    replicas = dep["spec"].get("replicas", 1)
    peers = (env.get("IQSTREAM_PEERS", {}).get("value") or "").split(",")
    want = [f"{dep['metadata']['name']}-{i}.{dns}" for i in range(replicas)]
    check(peers == want, f"IQSTREAM_PEERS {peers}, expected the {replicas} replicas' names {want}")

    # the image's version
    with open(os.path.join(ROOT, "pom.xml"), encoding="utf-8") as f:
        version = re.search(r"<artifactId>iqstream-parent</artifactId>\s*<version>([^<]+)</version>", f.read())
    check(version and c["image"].endswith(":" + version.group(1)),
          f"image {c['image']} is not tagged with the project version {version and version.group(1)}")

    # Services and PDB
    svc = one(docs, "Service", "iqstream")
    nodes = one(docs, "Service", "iqstream-nodes")
    check(headless == "iqstream-nodes", f"serviceName {headless} is not the headless Service iqstream-nodes")
    check(nodes.get("spec", {}).get("publishNotReadyAddresses") is True, "iqstream-nodes must publish pods that are "
          "not ready: peers reach a draining or starting node by its name")
    for s in (svc, nodes):
        check(selects(s.get("spec", {}).get("selector"), pod_labels), f"Service {s['metadata']['name']} selects no pod")
        for p in s.get("spec", {}).get("ports", []):
            check(p["targetPort"] in ports or p["targetPort"] in ports.values(),
                  f"Service {s['metadata']['name']} targets unknown port {p['targetPort']}")
    check(nodes.get("spec", {}).get("clusterIP") == "None", "iqstream-nodes is not headless")
    pdb = one(docs, "PodDisruptionBudget", "iqstream")
    check(selects(pdb.get("spec", {}).get("selector", {}).get("matchLabels"), pod_labels), "PDB selects no pod")
    check("maxUnavailable" in pdb.get("spec", {}) or pdb["spec"].get("minAvailable", 1) < dep["spec"]["replicas"],
          "the PDB would block every eviction")

    kust = one(docs, "Kustomization")
    for r in kust.get("resources", []):
        check(os.path.exists(os.path.join(HERE, r)), f"kustomization lists missing {r}")
    check("secret.example.yaml" not in kust.get("resources", []), "the example Secret must not be applied")

    if problems:
        print("test-manifests: FAIL:\n  " + "\n  ".join(problems))
        sys.exit(1)
    used = sorted(n for n in env if n.startswith("IQSTREAM_"))
    print(f"test-manifests: ok ({len(docs)} files; {len(used)} variables checked against --help: {', '.join(used)}; "
          f"ports {ports}; grace {grace}s > {pause_s}s + {drain_s:.0f}s; {replicas} replicas, each advertising its "
          f"pod name, peers {len(peers)}; data dir {data_dir} on claim {mounts[0]['name'] if mounts else None})")


if __name__ == "__main__":
    main()
