// What the exec classifier lets a file reader open (issue 19, items 1 and 2): /proc links that
// leave the readable roots, secret files and their backup copies, one row per shape; the file
// operands it reports to executors; and the masking of systemctl's environment values.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "pulse/core/tools/exec_classifier.h"

namespace pulse::core {
namespace {

struct Row {
  std::string command;
  ExecRefusal expected;
};

TEST_CASE("a /proc link out of the readable roots is refused, not read",
          "[core][tools][exec][reads]") {
  using R = ExecRefusal;
  const std::vector<Row> rows = {
      // The child runs in "/": /proc/self/cwd/x is /x, whatever x is.
      {"cat /proc/self/cwd/tmp/canary", R::kSensitivePath},
      {"cat /proc/self/cwd/etc/hostname", R::kSensitivePath},
      {"cat /proc/self/cwd/var/lib/pulse/pulse.db", R::kSensitivePath},
      {"head -c 16 /proc/self/cwd/srv/pulse-data/pulse.db", R::kSensitivePath},
      {"cat /proc/thread-self/cwd/tmp/canary", R::kSensitivePath},
      {"cat /proc/1/cwd/tmp/canary", R::kSensitivePath},
      {"cat /proc/self/root/tmp/canary", R::kSensitivePath},
      {"cat /proc/1/root/root/.ssh/id_rsa", R::kSensitivePath},
      {"tail /proc/thread-self/root/home/alice/.bash_history", R::kSensitivePath},
      {"cat /proc/self/exe", R::kSensitivePath},
      {"wc -c /proc/1/exe", R::kSensitivePath},
      {"cat /proc/self/task/1/cwd/tmp/canary", R::kSensitivePath},
      {"cat /proc/1/task/1/root/tmp/canary", R::kSensitivePath},
      {"cat /proc/self/ns/net", R::kSensitivePath},
      {"cat /proc/self/fd/3", R::kSensitivePath},
      {"cat /proc/self/map_files/400000-401000", R::kSensitivePath},
      {"timeout 5 cat /proc/self/cwd/tmp/canary", R::kSensitivePath},
      {"timeout -k 1 5 head -n 1 /proc/self/root/tmp/canary", R::kSensitivePath},
      {"cat /etc/hostname /proc/self/cwd/tmp/canary", R::kSensitivePath},
      {"cat -- /proc/self/cwd/tmp/canary", R::kSensitivePath},
  };
  for (const Row& row : rows) {
    const ExecVerdict verdict = ClassifyExecCommand(row.command);
    INFO(row.command << " -> " << ToString(verdict.refusal) << ": " << verdict.reason);
    CHECK_FALSE(verdict.allowed);
    CHECK(verdict.refusal == row.expected);
  }
}

TEST_CASE("secret files and their backup copies are refused, one row per shape",
          "[core][tools][exec][reads]") {
  const std::vector<std::string> secret_files = {
      "/etc/shadow.bak",
      "/etc/gshadow.bak",
      "/etc/shadow-",
      "/etc/gshadow-",
      "/etc/shadow.old",
      "/etc/shadow.orig",
      "/etc/shadow.dpkg-old",
      "/etc/shadow.dpkg-dist",
      "/etc/shadow.1",
      "/etc/shadow.bak.gz",
      "/etc/SHADOW.BAK",
      "/etc/sudoers.rpmsave",
      "/etc/security/opasswd",
      "/etc/security/opasswd.old",
      "/etc/postfix/sasl_passwd",
      "/etc/postfix/sasl_passwd.db",
      "/etc/exim4/passwd.client",
      "/etc/nginx/.htpasswd",
      "/etc/ceph/ceph.client.admin.keyring",
      "/etc/ceph/keyring",
      "/etc/pve/priv/ceph/rbd.keyring",
      "/etc/rancher/k3s/k3s.yaml",
      "/etc/rancher/k3s/config.yaml",
      "/etc/rancher/rke2/rke2.yaml",
      "/etc/kubernetes/admin.conf",
      "/etc/kubernetes/kubelet.conf",
      "/etc/kubernetes/pki/ca.crt",
      "/etc/NetworkManager/system-connections/home.nmconnection",
      "/etc/NetworkManager/system-connections/office-wifi",
      "/etc/wpa_supplicant/wpa_supplicant.conf",
      "/etc/wpa_supplicant/wpa_supplicant-wlan0.conf",
      "/etc/wpa_supplicant.conf",
      "/etc/hostapd/hostapd.conf",
      "/etc/mysql/debian.cnf",
      "/etc/mysql/debian.cnf.dpkg-old",
      "/etc/skel/.netrc",
      "/etc/skel/.pgpass",
      "/etc/skel/.my.cnf",
      "/etc/skel/.docker/config.json",
      "/etc/docker/config.json",
      "/etc/containers/auth.json",
      "/etc/skel/.kube/config",
      "/etc/kubeconfig",
      "/etc/ipsec.secrets",
      "/etc/ppp/chap-secrets",
      "/etc/openvpn/client/office.ovpn",
      "/etc/app/server.keystore",
      "/etc/ssh/ssh_host_ed25519_key.bak",
      "/var/log/backup/id_rsa",
      "/var/log/shadow.bak",
  };
  for (const std::string& path : secret_files) {
    INFO(path);
    CHECK(IsSensitiveExecPath(path));
    CHECK_FALSE(IsReadableExecPath(path));
    const ExecVerdict verdict = ClassifyExecCommand("cat " + path);
    CHECK_FALSE(verdict.allowed);
    CHECK(verdict.refusal == ExecRefusal::kSensitivePath);
  }
}

TEST_CASE("ordinary system files stay readable beside the new secret shapes",
          "[core][tools][exec][reads]") {
  const std::vector<std::string> readable = {
      "/etc/passwd",
      "/etc/passwd-",
      "/etc/passwd.bak",
      "/etc/group",
      "/etc/pam.d/passwd",
      "/etc/mysql/my.cnf",
      "/etc/NetworkManager/NetworkManager.conf",
      "/etc/docker/daemon.json",
      "/etc/ceph/ceph.conf",
      "/etc/hostname",
      "/etc/mtab",
      "/proc/self/status",
      "/proc/self/mounts",
      "/proc/1/cgroup",
      "/proc/net/dev",
      "/proc/sys/kernel/osrelease",
      "/var/log/syslog.1",
      "/var/log/nginx/access.log.2.gz",
      "/sys/class/net/eth0/operstate",
  };
  for (const std::string& path : readable) {
    INFO(path);
    CHECK(IsReadableExecPath(path));
    CHECK(ClassifyExecCommand("cat " + path).allowed);
  }
}

TEST_CASE("an accepted reader reports which words are the files it opens",
          "[core][tools][exec][reads]") {
  ExecVerdict v = ClassifyExecCommand("head -n 5 /var/log/syslog /etc/hostname");
  REQUIRE(v.allowed);
  CHECK(v.file_operands == std::vector<std::size_t>{3, 4});
  v = ClassifyExecCommand("timeout -k 1 5 tail -n50 -- /var/log/syslog");
  REQUIRE(v.allowed);
  CHECK(v.file_operands == std::vector<std::size_t>{7});
  v = ClassifyExecCommand("wc -l /etc/passwd");
  REQUIRE(v.allowed);
  CHECK(v.file_operands == std::vector<std::size_t>{2});
  // Programs that only look at metadata open no file for reading.
  for (const char* command : {"ls -la /var/log", "stat /etc/hostname", "timeout 5 df -h /"}) {
    v = ClassifyExecCommand(command);
    INFO(command);
    REQUIRE(v.allowed);
    CHECK(v.file_operands.empty());
  }
  CHECK(ClassifyExecCommand("cat /proc/self/cwd/x").file_operands.empty());
}

TEST_CASE("systemctl show never prints environment or credential values",
          "[core][tools][exec][reads]") {
  for (const char* refused :
       {"systemctl show --value nginx", "systemctl show -P Environment nginx",
        "systemctl show -p Environment --value nginx",
        "systemctl show --property=Environment "
        "--value nginx",
        "systemctl show -p ActiveState,Environment --value nginx",
        "systemctl show -pSetCredential --value nginx", "systemctl show -P environmentfiles x",
        "timeout 5 systemctl show --value nginx"}) {
    const ExecVerdict verdict = ClassifyExecCommand(refused);
    INFO(refused << " -> " << verdict.reason);
    CHECK_FALSE(verdict.allowed);
    CHECK(verdict.refusal == ExecRefusal::kUnsafeArgument);
  }
  for (const char* accepted :
       {"systemctl show nginx", "systemctl show -p ActiveState --value nginx",
        "systemctl show -P ActiveState nginx", "systemctl show -p Environment nginx"}) {
    INFO(accepted);
    CHECK(ClassifyExecCommand(accepted).allowed);
  }
  const std::string shown =
      "Type=simple\n"
      "Environment=DB_PASSWORD=hunter2 API_KEY=k-123\n"
      "EnvironmentFiles=/etc/default/app (ignore_errors=no)\n"
      "SetCredential=token:s3cr3t\n"
      "SetCredentialEncrypted=token:Whxqht+dQJax1aZeCGLxmiAAAAABAAAAAAAAAAA\n"
      "PassEnvironment=TERM\n"
      "Environment=\n"
      "ActiveState=active";
  const std::string masked =
      "Type=simple\n"
      "Environment=***\n"
      "EnvironmentFiles=***\n"
      "SetCredential=***\n"
      "SetCredentialEncrypted=***\n"
      "PassEnvironment=TERM\n"
      "Environment=\n"
      "ActiveState=active";
  CHECK(MaskExecOutput({"systemctl", "show", "app"}, shown) == masked);
  CHECK(MaskExecOutput({"timeout", "5", "systemctl", "show", "app"}, shown) == masked);
  CHECK(MaskExecOutput({"systemctl", "show", "app"}, "Environment=A=1") == "Environment=***");
  // Only systemctl prints properties; a file's text is the file's.
  CHECK(MaskExecOutput({"cat", "/etc/environment"}, shown) == shown);
}

}  // namespace
}  // namespace pulse::core
