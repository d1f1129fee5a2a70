#!/usr/bin/python3
"""What each same-user attacker gets from a Secret Service provider: Tresor, gnome-keyring and
KeePassXC with its confirmations on, measured (docs/SECURITY.md, "What a same-user attacker gets, measured").

Run as root (it makes an unprivileged user, `tresor-attacker`, and runs everything else as that
user): for every provider and every attacker, a private session bus and a fresh provider, the
victims' items stored by the genuine clients, the attack, and the victims' items checked again.

    Benchmarks/attackers.py [--bin DIR] [--out DIR] [--wait SECONDS] [--only PROVIDER,…]

--bin holds the built `tresord` and `tresor` (default .build/debug); --out gets attackers.json,
attackers.md and attackers.log (default Benchmarks/runs/attackers-run); --wait bounds every wait for a
user who never answers (default 10 s). Providers: tresor, tresor-trusting, gnome-keyring, keepassxc.
Needs Debian's dbus, libsecret-tools, libsecret-1-dev, gcc, git, python3-jeepney, python3-keyring,
gnome-keyring, keepassxc, util-linux (unshare, setpriv). The secrets are random markers; the log
and the JSON name them by their victim, never by value.
"""
import argparse
import base64
import json
import os
import pwd
import re
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
import xml.etree.ElementTree as ElementTree

HERE = os.path.dirname(os.path.abspath(__file__))
REPOSITORY = os.path.dirname(HERE)
# The attacker the tests run too (read, take, fork-exec).
ATTACK = os.path.join(REPOSITORY, "Tests", "Fixtures", "SecretService", "borrow_bus.py")
KEYRING_CLIENT = os.path.join(REPOSITORY, "Tests", "Fixtures", "SecretService", "keyring_client.py")
GIT_HELPER_SOURCE = "/usr/share/doc/git/contrib/credential/libsecret/git-credential-libsecret.c"
PYTHON = "/usr/bin/python3"
SECRET_TOOL = "/usr/bin/secret-tool"
BUS = "org.freedesktop.secrets"
USER = "tresor-attacker"

log_file = None
markers = {}  # secret value -> what it is, for the log and the JSON


def redact(text):
    for value, name in markers.items():
        text = text.replace(value, f"<{name}>")
    return text


def log(line):
    log_file.write(redact(line) + "\n")
    log_file.flush()


class Result:
    def __init__(self, status, stdout, stderr, timed_out, seconds):
        self.status, self.stdout, self.stderr, self.timed_out, self.seconds = status, stdout, stderr, timed_out, seconds


class User:
    """The unprivileged user everything runs as: a daemon running as root never trusts a path."""

    def __init__(self):
        try:
            entry = pwd.getpwnam(USER)
        except KeyError:
            subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", USER], check=True)
            entry = pwd.getpwnam(USER)
        self.uid, self.gid = entry.pw_uid, entry.pw_gid

    def argv(self, command):
        return ["setpriv", f"--reuid={self.uid}", f"--regid={self.gid}", "--clear-groups", "--"] + command

    def own(self, path):
        subprocess.run(["chown", "-R", f"{self.uid}:{self.gid}", path], check=True)

    def start(self, command, env, output):
        return subprocess.Popen(self.argv(command), env=env, stdin=subprocess.PIPE, stdout=output, stderr=output, start_new_session=True)

    def run(self, command, env, input=None, timeout=60, what=None, quiet=False):
        """Runs `command` as the user; on timeout its whole process group is killed. `quiet` logs
        the command and its status, not its output."""
        started = time.monotonic()
        process = subprocess.Popen(
            self.argv(command), env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        timed_out = False
        try:
            stdout, stderr = process.communicate(input=(input or "").encode(), timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            os.killpg(process.pid, signal.SIGKILL)
            stdout, stderr = process.communicate()
        result = Result(process.returncode, stdout.decode(errors="replace"), stderr.decode(errors="replace"), timed_out, time.monotonic() - started)
        log(f"$ {what or ' '.join(command)}  -> {'timed out after %d s' % timeout if timed_out else result.status} ({result.seconds:.1f} s)")
        for name, text in (("out", result.stdout), ("err", result.stderr)):
            for line in ([] if quiet else text.strip().splitlines()[:40]):
                log(f"  {name}| {line}")
        return result


def wait_for(condition, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.2)
    raise RuntimeError(f"{what} did not happen within {timeout} s")


class Instance:
    """A private session bus of the user's, with a home of its own: one provider, one attack."""

    def __init__(self, user, root, name):
        self.user = user
        self.folder = tempfile.mkdtemp(prefix=f"{name}-", dir=root)
        for sub in ("home", "run", "bin"):
            os.makedirs(os.path.join(self.folder, sub), mode=0o700)
        self.home = os.path.join(self.folder, "home")
        configuration = os.path.join(self.folder, "bus.conf")
        with open(configuration, "w") as file:
            file.write(f"""<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig><type>session</type><keep_umask/><listen>unix:dir={self.folder}</listen><auth>EXTERNAL</auth>
<policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy></busconfig>
""")
        user.own(self.folder)
        self.bus = subprocess.Popen(
            user.argv(["dbus-daemon", f"--config-file={configuration}", "--nofork", "--nopidfile", "--print-address=1"]),
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
        address = self.bus.stdout.readline().decode().strip()
        if not address.startswith("unix:"):
            raise RuntimeError(f"dbus-daemon printed {address!r}")
        self.env = {
            "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": self.home, "XDG_RUNTIME_DIR": os.path.join(self.folder, "run"),
            "XDG_CONFIG_HOME": os.path.join(self.home, ".config"), "XDG_DATA_HOME": os.path.join(self.home, ".local", "share"),
            "DBUS_SESSION_BUS_ADDRESS": address, "GIT_TERMINAL_PROMPT": "0", "QT_QPA_PLATFORM": "offscreen",
        }
        self.processes = []

    def name_owned(self):
        answer = self.user.run(
            ["dbus-send", "--session", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
             "org.freedesktop.DBus.NameHasOwner", f"string:{BUS}"], self.env, timeout=10, what="dbus-send NameHasOwner", quiet=True)
        return "boolean true" in answer.stdout

    def start(self, command, input=None, log_name="provider.log"):
        output = open(os.path.join(self.folder, log_name), "ab")
        process = self.user.start(command, self.env, output)
        if input is not None:
            process.stdin.write(input.encode())
        process.stdin.close()
        self.processes.append(process)
        return process

    def close(self):
        for process in self.processes + [self.bus]:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        shutil.rmtree(self.folder, ignore_errors=True)


# --- The victims -----------------------------------------------------------------------------

class Victim:
    """A client that stores one item and looks it up again as its user would."""

    def __init__(self, name, label, key):
        self.name, self.label, self.key = name, label, key


SECRET_TOOL_ITEM = Victim("secret-tool", "Mail login", "mail.example")
GIT_ITEM = Victim("git's helper", "Git: https://git.example/", "git.example")
KEYRING_ITEM = Victim("Python keyring", "Password for 'ada' on 'chat.example'", "chat.example")
APP_ITEM = Victim("registered application", "Notes sync account", "notes-sync")
VICTIMS = [SECRET_TOOL_ITEM, GIT_ITEM, KEYRING_ITEM, APP_ITEM]


class Clients:
    """The genuine clients, as the user runs them: secret-tool, git's helper, keyring, notes-sync."""

    def __init__(self, helper, app):
        self.helper, self.app = helper, app

    def store(self, instance, victim, secret):
        # KeePassXC, just started, once left the first store unanswered: a store is tried again.
        for _ in range(3):
            answer = self.store_once(instance, victim, secret)
            if not answer.timed_out:
                break
        if answer.status != 0:
            raise RuntimeError(f"{victim.name} could not store its item: {redact(answer.stderr)}")

    def store_once(self, instance, victim, secret):
        user, env = instance.user, instance.env
        timeout = 20
        if victim is SECRET_TOOL_ITEM:
            answer = user.run([SECRET_TOOL, "store", "--label=Mail login", "service", "mail.example", "user", "ada"], env, input=secret, timeout=timeout)
        elif victim is GIT_ITEM:
            answer = user.run(
                [self.helper, "store"], env, input=f"protocol=https\nhost=git.example\nusername=ada\npassword={secret}\n\n", timeout=timeout)
        elif victim is KEYRING_ITEM:
            answer = user.run([PYTHON, "-B", KEYRING_CLIENT, "set", "chat.example", "ada"], env, input=secret, timeout=timeout)
        else:
            answer = user.run([self.app, "store"], env, input=secret, timeout=timeout)
        return answer

    def holds(self, instance, victim, secret):
        """Whether the victim's own lookup still returns its secret: intact, replaced or missing."""
        user, env = instance.user, instance.env
        if victim is SECRET_TOOL_ITEM:
            found = user.run([SECRET_TOOL, "lookup", "service", "mail.example", "user", "ada"], env, timeout=30).stdout
        elif victim is GIT_ITEM:
            answer = user.run([self.helper, "get"], env, input="protocol=https\nhost=git.example\nusername=ada\n\n", timeout=30).stdout
            found = next((line[9:] for line in answer.splitlines() if line.startswith("password=")), "")
        elif victim is KEYRING_ITEM:
            found = user.run([PYTHON, "-B", KEYRING_CLIENT, "get", "chat.example", "ada"], env, timeout=30).stdout
        else:
            said = user.run([self.app, "check"], env, input=secret, timeout=30).stdout.strip()
            return {"same": "intact", "different": "replaced"}.get(said, "missing")
        return "intact" if found == secret else ("missing" if not found else "replaced")


# --- The providers ---------------------------------------------------------------------------

class Tresor:
    def __init__(self, binaries, trusting):
        self.binaries, self.trusting = binaries, trusting
        self.key = "tresor-trusting" if trusting else "tresor"
        self.title = "Tresor, generic clients trusted ahead of time" if trusting else "Tresor (as installed)"

    def tresor(self, instance, arguments, input=None):
        answer = instance.user.run([os.path.join(self.binaries, "tresor")] + arguments, instance.env, input=input, timeout=60)
        if answer.status != 0:
            raise RuntimeError(f"tresor {arguments[0]} failed: {answer.stderr}")
        return answer

    def start(self, instance, clients):
        instance.env["TRESOR_HOME"] = os.path.join(instance.home, "tresor")
        instance.env["XDG_STATE_HOME"] = os.path.join(instance.home, ".local", "state")
        instance.start([os.path.join(self.binaries, "tresord"), "--home", instance.env["TRESOR_HOME"], "--secret-service"])
        wait_for(instance.name_owned, 60, "tresord owning org.freedesktop.secrets")
        self.passcode = "attackers-" + secrets.token_hex(8)
        markers[self.passcode] = "the passcode"
        self.tresor(instance, ["init", "--passcode-stdin"], input=self.passcode + "\n")
        # notes-sync is an application of its own, registered for the bus as its installer would.
        self.tresor(instance, ["app", "register", "--id", "EXAMPLE.notes-sync", "--team", "EXAMPLE", "--exe", clients.app,
                               "--group", "EXAMPLE.notes", "--secret-service", "--passcode-stdin"], input=self.passcode + "\n")
        if self.trusting:
            self.trust(instance, clients)

    def trust(self, instance, clients):
        self.tresor(instance, ["secret-service", "trust", "add", SECRET_TOOL, PYTHON, clients.helper, "--passcode-stdin"],
                    input=self.passcode + "\n")

    def before_checking(self, instance, clients):
        # The victims look their items up as the user who trusts them would (after the attack).
        if not self.trusting:
            self.trust(instance, clients)


class GnomeKeyring:
    key, title = "gnome-keyring", "gnome-keyring 42 (login collection unlocked)"

    def start(self, instance, clients):
        instance.start(["gnome-keyring-daemon", "--foreground", "--unlock", "--components=secrets"], input="login-password")
        wait_for(instance.name_owned, 60, "gnome-keyring owning org.freedesktop.secrets")

    def before_checking(self, instance, clients):
        pass


class KeePassXC:
    key, title = "keepassxc", "KeePassXC 2.7 (confirmations on)"

    def start(self, instance, clients):
        user, env = instance.user, instance.env
        database = instance.keepassxc_database = os.path.join(instance.home, "secrets.kdbx")
        base = os.path.join(instance.home, "base.kdbx")
        user.run(["keepassxc-cli", "db-create", "-q", "-p", "-t", "100", base], env, input="pw\npw\n")
        exported = user.run(["keepassxc-cli", "export", "-q", "-f", "xml", base], env, input="pw\n", quiet=True).stdout
        # Expose the root group over the Secret Service (FDO_SECRETS_EXPOSED_GROUP holds "{uuid}").
        root = "{%s}" % uuid.UUID(bytes=base64.b64decode(re.search(r"<Root>\s*<Group>\s*<UUID>([^<]+)</UUID>", exported).group(1)))
        item = f"<Item><Key>FDO_SECRETS_EXPOSED_GROUP</Key><Value>{root}</Value></Item>"
        head, tail = exported.split("</Meta>", 1)
        head = head.replace("<CustomData>", "<CustomData>" + item, 1) if "<CustomData>" in head else head + f"<CustomData>{item}</CustomData>"
        xml = os.path.join(instance.home, "exposed.xml")
        with open(xml, "w") as file:
            file.write(head + "</Meta>" + tail)
        user.own(xml)
        user.run(["keepassxc-cli", "import", "-q", "-p", "-t", "100", xml, database], env, input="pw\npw\n")
        configuration = os.path.join(instance.home, ".config", "keepassxc")
        os.makedirs(configuration, exist_ok=True)
        with open(os.path.join(configuration, "keepassxc.ini"), "w") as file:
            # Confirmations as a user who wants them has them: every read and delete is asked. Saved
            # after every change, so that the file shows what the attack left (a dozen changes here;
            # it crashed after 129 in a row in the speed runs).
            file.write("[General]\nConfigVersion=2\nAutoSaveAfterEveryChange=true\nAutoSaveOnExit=false\n\n"
                       "[FdoSecrets]\nEnabled=true\nConfirmAccessItem=true\nConfirmDeleteItem=true\nShowNotification=false\n"
                       "UnlockBeforeSearch=false\n")
        user.own(instance.home)
        instance.start(["keepassxc", "--pw-stdin", database], input="pw\n")
        wait_for(instance.name_owned, 60, "KeePassXC owning org.freedesktop.secrets")
        # It owns the name before its database is open.
        wait_for(lambda: "/collection/" in user.run(
            ["dbus-send", "--session", "--print-reply", f"--dest={BUS}", "/org/freedesktop/secrets", "org.freedesktop.Secret.Service.ReadAlias",
             "string:default"], env, timeout=10, what="dbus-send ReadAlias default", quiet=True).stdout, 60, "KeePassXC opening its database")

    def before_checking(self, instance, clients):
        pass


# --- The attackers ---------------------------------------------------------------------------

def attack_random_binary(instance, clients, wait, replacement):
    """(a) A program nobody installed: a copy of python3 with a few bytes appended (another file,
    another hash), in the user's cache."""
    copy = os.path.join(instance.home, ".cache", "updater", "updater")
    os.makedirs(os.path.dirname(copy), exist_ok=True)
    with open(os.path.realpath(PYTHON), "rb") as source, open(copy, "wb") as target:
        target.write(source.read() + b"\nnot installed anywhere\n")
    os.chmod(copy, 0o755)
    instance.user.own(os.path.join(instance.home, ".cache"))
    return [instance.user.run([copy, "-B", ATTACK, "take", "--wait", str(wait), "--replace", replacement], instance.env, timeout=8 * wait + 60)]


def attack_python_script(instance, clients, wait, replacement):
    """(b) A Python script run by Debian's python3: the D-Bus attack, and keyring's own API."""
    return [
        instance.user.run([PYTHON, "-B", ATTACK, "take", "--wait", str(wait), "--replace", replacement], instance.env, timeout=8 * wait + 60),
        instance.user.run([PYTHON, "-B", KEYRING_CLIENT, "get", "chat.example", "ada"], instance.env, timeout=2 * wait),
    ]


def attack_genuine_clients(instance, clients, wait, replacement):
    """(c) A shell script running the genuine clients with arguments of its choosing."""
    commands = [
        f"timeout {wait} {SECRET_TOOL} search --all --unlock service mail.example",
        f"timeout {wait} {SECRET_TOOL} lookup service mail.example user ada",
        f"printf 'protocol=https\\nhost=git.example\\nusername=ada\\n\\n' | timeout {wait} git -c credential.helper={clients.helper} credential fill",
        f"timeout {wait} {PYTHON} -m keyring get chat.example ada",
        f"printf %s \"$1\" | timeout {wait} {SECRET_TOOL} store --label=attacker service mail.example user ada",
        f"printf 'protocol=https\\nhost=git.example\\nusername=ada\\npassword=%s\\n\\n' \"$1\" | "
        f"timeout {wait} git -c credential.helper={clients.helper} credential approve",
        # keyring 23.9 drops the last character it reads from a pipe: a newline.
        f"printf '%s\\n' \"$1\" | timeout {wait} {PYTHON} -m keyring set chat.example ada",
    ]
    # Each command's status on standard error: 124 is a client that waited for the user until timeout.
    script = "".join(f"{command}; s=$?; echo; echo \"status $s\" >&2\n" for command in commands)
    return [instance.user.run(["/bin/sh", "-c", script, "attack", replacement], instance.env, timeout=8 * wait + 60, what="sh -c '(the genuine clients)'")]


def attack_borrowed_connection(instance, clients, wait, replacement):
    """(d) Connect, fork, execute the victim in the connected process, speak from the child."""
    victims = [
        [SECRET_TOOL, "store", "--label=never", "never", "never"],  # its socket closes at exec
        ["--keep", clients.helper, "get"],  # the socket stays open across the exec
        [clients.app, "store"],
    ]
    return [instance.user.run([PYTHON, "-B", ATTACK, "fork-exec", "--take", "--wait", str(wait), "--replace", replacement] + victim, instance.env,
                              timeout=8 * wait + 60) for victim in victims]


def attack_private_namespace(instance, clients, wait, replacement):
    """(e) python3 bind-mounted over /usr/bin/secret-tool in the attacker's own user and mount
    namespaces; a nested user namespace maps its uid back, so the bus lets it in."""
    user = instance.user
    inner = (f"mount --bind {PYTHON} {SECRET_TOOL} && exec unshare --user --map-user={user.uid} --map-group={user.gid} "
             f"{SECRET_TOOL} -B {ATTACK} take --wait {wait} --replace \"$0\"")
    return [user.run(["unshare", "-Urm", "/bin/sh", "-c", inner, replacement], instance.env, timeout=8 * wait + 60)]


ATTACKERS = [
    ("random binary", "a program nobody installed (a copied ELF) lists, reads, replaces", attack_random_binary),
    ("Python script", "python3 running a script: D-Bus and keyring's API", attack_python_script),
    ("genuine clients", "a script running secret-tool, git credential, python3 -m keyring", attack_genuine_clients),
    ("borrowed connection", "connect, fork, exec secret-tool / git's helper / the registered application, speak from the child",
     attack_borrowed_connection),
    ("private namespace", "unshare -Urm, python3 bind-mounted over /usr/bin/secret-tool", attack_private_namespace),
]


# --- Measuring -------------------------------------------------------------------------------

def judge(results, victim, secret, state):
    """What the attacker got of one victim's item, from its output and the item afterwards."""
    # What the attacker printed of the provider's answers (not the victim it borrowed from).
    output = "".join(line for result in results for line in result.stdout.splitlines(True) if '"borrowed"' not in line)
    got = []
    if victim.key in output or victim.label in output:
        got.append("listed")
    if secret in output:
        got.append("read")
    if state == "replaced":
        got.append("replaced")
    elif state == "missing":
        got.append("deleted")
    elif state == "unchecked":
        got.append("unchecked")
    return got


def waited(results, wait):
    """Whether the attack waited for a user nobody was: a prompt unanswered, or a client timed out."""
    output = "".join(result.stdout for result in results)
    prompts = len(re.findall(r'"prompt": "no answer"', output))
    timeouts = sum(1 for result in results if result.timed_out)
    timeouts += sum(len(re.findall(r"^status 124$", result.stderr, re.MULTILINE)) for result in results)
    return prompts + timeouts


def build(user, root):
    """git's libsecret helper and notes-sync, compiled where the user can run them."""
    folder = os.path.join(root, "clients")
    os.makedirs(folder, exist_ok=True)
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "libsecret-1", "glib-2.0"], capture_output=True, text=True, check=True).stdout.split()
    helper, app = os.path.join(folder, "git-credential-libsecret"), os.path.join(folder, "notes-sync")
    subprocess.run(["gcc", "-O1", "-o", helper, GIT_HELPER_SOURCE] + flags, check=True)
    subprocess.run(["gcc", "-O1", "-o", app, os.path.join(HERE, "attackers", "notes-sync.c")] + flags, check=True)
    os.chmod(folder, 0o755)
    return Clients(helper, app)


def measure(provider, attacker, user, root, clients, wait):
    name, _, attack = attacker
    instance = Instance(user, root, provider.key)
    log(f"\n=== {provider.title} × {name}")
    try:
        provider.start(instance, clients)
        stored = {}
        for victim in VICTIMS:
            secret = f"victim-{secrets.token_hex(8)}"
            markers[secret] = f"{victim.name}'s secret"
            clients.store(instance, victim, secret)
            stored[victim.name] = secret
        replacement = f"attacker-{secrets.token_hex(6)}"
        markers[replacement] = "the attacker's value"
        started = time.monotonic()
        results = attack(instance, clients, wait, replacement)
        seconds = time.monotonic() - started
        # What the victim itself gets when it reads its own item now, with nobody at the screen.
        own = instance.user.run([SECRET_TOOL, "lookup", "service", "mail.example", "user", "ada"], instance.env, timeout=wait,
                                what="secret-tool lookup (the victim's own)")
        own_lookup = "waited for the user" if own.timed_out else ("served" if own.stdout else "refused")
        provider.before_checking(instance, clients)
        # Nobody to ask, said at once: a prompt dismissed, or its `Prompt` call refused.
        prompts_answered = sum(result.stdout.count('"prompt": "dismissed"') + result.stdout.count('"prompt": "refused"')
                               for result in results)
        cell = {"seconds": round(seconds, 1), "waited_for_the_user": waited(results, wait), "prompts_answered_at_once": prompts_answered,
                "secret-tool's own lookup": own_lookup, "victims": {}}
        for victim in VICTIMS:
            state = provider_state(provider, instance, clients, victim, stored[victim.name])
            cell["victims"][victim.name] = judge(results, victim, stored[victim.name], state)
        cell["refusals"] = sorted(set(re.findall(r'"refused": "([^"]+)"', "".join(r.stdout for r in results))))
        log(f"--> {json.dumps(cell)}")
        return cell
    except Exception as error:  # noqa: BLE001 — a provider that fails to start is a finding, not a crash
        log(f"--> failed: {error}")
        return {"error": redact(str(error))}
    finally:
        instance.close()


def provider_state(provider, instance, clients, victim, secret):
    if isinstance(provider, KeePassXC):
        return keepassxc_state(instance, victim, secret)
    return clients.holds(instance, victim, secret)


def keepassxc_state(instance, victim, secret):
    """KeePassXC asks before every read, the victims' too: their items are read from its database
    file, which it saves after changes. Every entry that is the victim's item (its label, or an
    attribute with the victim's value) must still hold its secret. An item not in the file (once,
    the last one stored before the attack) is "unchecked": the file is behind, nothing was deleted
    (the attackers delete nothing)."""
    for attempt in range(3):
        exported = instance.user.run(["keepassxc-cli", "export", "-q", "-f", "xml", instance.keepassxc_database], instance.env, input="pw\n",
                                     what="keepassxc-cli export (the saved database)", quiet=True)
        tree = ElementTree.fromstring(exported.stdout)
        history = {id(entry) for old in tree.iter("History") for entry in old}
        passwords = []
        for entry in tree.iter("Entry"):
            if id(entry) in history:
                continue
            fields = {string.findtext("Key"): string.findtext("Value") or "" for string in entry.findall("String")}
            if fields.get("Title") == victim.label or victim.key in (value for key, value in fields.items() if key not in ("Title", "Password")):
                passwords.append(fields.get("Password", ""))
        if passwords:
            return "intact" if all(password == secret for password in passwords) else "replaced"
        time.sleep(2)
    return "unchecked"


def cell_text(cell):
    if "error" in cell:
        return f"not measured: {cell['error']}"
    parts = []
    for what in ("read", "replaced", "deleted", "listed", "unchecked"):
        who = [name for name, got in cell["victims"].items() if what in got and (what != "listed" or "read" not in got)]
        if who:
            label = {"listed": "listed only", "unchecked": "not in the saved database, unchecked"}.get(what, what)
            parts.append(f"{label}: {', '.join(who)}")
    if cell["waited_for_the_user"]:
        parts.append(f"waited for the user {cell['waited_for_the_user']}× (nobody answered)")
    if cell.get("prompts_answered_at_once"):
        parts.append(f"its prompt dismissed or refused at once {cell['prompts_answered_at_once']}× (nobody to ask)")
    return "; ".join(parts) or "nothing"


def main():
    global log_file
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", default=os.path.join(REPOSITORY, ".build", "debug"))
    parser.add_argument("--out", default=os.path.join(HERE, "runs", "attackers-run"))
    parser.add_argument("--wait", type=int, default=10)
    parser.add_argument("--only", default="tresor,tresor-trusting,gnome-keyring,keepassxc")
    options = parser.parse_args()
    if os.getuid() != 0:
        raise SystemExit("attackers.py runs as root: it makes the user the providers and attackers run as")
    os.makedirs(options.out, exist_ok=True)
    log_file = open(os.path.join(options.out, "attackers.log"), "w")
    user = User()
    root = tempfile.mkdtemp(prefix="tresor-attackers-", dir="/var/tmp")
    os.chmod(root, 0o755)
    providers = [p for p in (Tresor(options.bin, False), Tresor(options.bin, True), GnomeKeyring(), KeePassXC())
                 if p.key in options.only.split(",")]
    try:
        clients = build(user, root)
        table = {}
        for attacker in ATTACKERS:
            table[attacker[0]] = {provider.key: measure(provider, attacker, user, root, clients, options.wait) for provider in providers}
    finally:
        shutil.rmtree(root, ignore_errors=True)
    versions = subprocess.run(["dpkg-query", "-W", "-f=${Package} ${Version}\\n", "gnome-keyring", "keepassxc", "libsecret-tools", "dbus",
                               "python3-keyring", "python3-jeepney", "git"], capture_output=True, text=True).stdout.split("\n")
    commit = subprocess.run(["git", "-C", REPOSITORY, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    report = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "commit": commit, "wait_seconds": options.wait,
              "versions": [v for v in versions if v], "providers": {p.key: p.title for p in providers},
              "attackers": {name: description for name, description, _ in ATTACKERS}, "table": table}
    with open(os.path.join(options.out, "attackers.json"), "w") as file:
        json.dump(report, file, indent=2)
    lines = ["| attacker | " + " | ".join(p.title for p in providers) + " |", "|---|" + "---|" * len(providers)]
    for name, description, _ in ATTACKERS:
        lines.append(f"| {name}: {description} | " + " | ".join(cell_text(table[name][p.key]) for p in providers) + " |")
    owns = [sorted({table[name][p.key].get("secret-tool's own lookup", "not measured") for name, _, _ in ATTACKERS}) for p in providers]
    lines.append("| the victim: secret-tool's lookup of its own item, after each attack | " + " | ".join(", ".join(own) for own in owns) + " |")
    markdown = "\n".join(lines) + "\n"
    with open(os.path.join(options.out, "attackers.md"), "w") as file:
        file.write(markdown)
    print(markdown)


if __name__ == "__main__":
    main()
