// ft_launch: runs N copies of a program on this machine as the ranks of one process group.
//
//   ft_launch [--timeout SECONDS] [--grace SECONDS] -n N PROGRAM [ARGS...]
//
// Each copy gets FT_RANK (0..N-1), FT_WORLD_SIZE (N) and FT_STORE=file:DIR, a fresh directory
// under TMPDIR (or /tmp) that the ranks meet in (init_process_group() reads the three) and
// that ft_launch removes at the end. Their standard output and error are forwarded line by
// line, each line prefixed with "[RANK] ".
//
// The run stops at the first rank that fails: when one exits non-zero or by a signal (or
// the --timeout passes, or ft_launch gets SIGINT, SIGTERM or SIGHUP), the others get SIGTERM,
// then SIGKILL after --grace seconds (default 3). Every rank runs in a process group of its own
// that these signals go to, and dies with ft_launch if ft_launch is killed (PR_SET_PDEATHSIG),
// so no process is left behind.
//
// Exit status: 0 when every rank exited 0; else the first failure's exit code (128 + the
// signal for a rank killed by one), 124 for --timeout, 2 for a usage error.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kUsageError = 2;
constexpr int kTimedOut = 124;
constexpr int kMaxRanks = 4096;

volatile sig_atomic_t g_signal = 0;

void OnSignal(int signal) { g_signal = signal; }

void Usage(FILE* out) {
  std::fprintf(out,
               "usage: ft_launch [--timeout SECONDS] [--grace SECONDS] -n N PROGRAM [ARGS...]\n"
               "  Runs N copies of PROGRAM as ranks 0..N-1 of one process group (FT_RANK,\n"
               "  FT_WORLD_SIZE, FT_STORE=file:DIR); stops all of them when one fails.\n"
               "  --timeout SECONDS  stop the run after this long (exit 124)\n"
               "  --grace SECONDS    from SIGTERM to SIGKILL when stopping ranks (default 3)\n");
}

[[noreturn]] void UsageError(const std::string& message) {
  std::fprintf(stderr, "ft_launch: %s\n", message.c_str());
  Usage(stderr);
  std::exit(kUsageError);
}

std::optional<double> ParseSeconds(const char* text) {
  errno = 0;
  char* end = nullptr;
  double value = std::strtod(text, &end);
  if (*text == '\0' || *end != '\0' || errno == ERANGE || !(value > 0) || value > 1e7) {
    return std::nullopt;
  }
  return value;
}

void WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return;  // our own output is gone (a closed pipe): nothing better to do
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
}

// Stream: one rank's stdout or stderr, forwarded line by line with the rank's prefix.
struct Stream {
  int fd = -1;  // the read end of the pipe; -1 once it reached EOF
  int out = 1;  // where its lines go
  std::string partial;
};

struct Rank {
  int rank = 0;
  pid_t pid = -1;
  bool running = false;
  int status = 0;
  Stream streams[2];
};

void Forward(const Rank& r, Stream& s, const char* data, size_t size, bool eof) {
  s.partial.append(data, size);
  size_t start = 0;
  const std::string prefix = "[" + std::to_string(r.rank) + "] ";
  for (;;) {
    size_t newline = s.partial.find('\n', start);
    if (newline == std::string::npos) {
      break;
    }
    std::string line = prefix + s.partial.substr(start, newline + 1 - start);
    WriteAll(s.out, line.data(), line.size());
    start = newline + 1;
  }
  s.partial.erase(0, start);
  if (eof && !s.partial.empty()) {
    std::string line = prefix + s.partial + "\n";
    WriteAll(s.out, line.data(), line.size());
    s.partial.clear();
  }
}

std::string Describe(int status) {
  if (WIFEXITED(status)) {
    return "exited with code " + std::to_string(WEXITSTATUS(status));
  }
  if (WIFSIGNALED(status)) {
    return "was killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
           strsignal(WTERMSIG(status)) + ")";
  }
  return "ended with status " + std::to_string(status);
}

int ExitCodeOf(int status) {
  if (WIFEXITED(status)) {
    return WEXITSTATUS(status);
  }
  if (WIFSIGNALED(status)) {
    return 128 + WTERMSIG(status);
  }
  return 1;
}

// StartRank forks and execs one rank; the child never returns.
void StartRank(Rank& r, int world, const std::string& store, char** argv, pid_t launcher) {
  int pipes[2][2];
  for (auto& p : pipes) {
    if (pipe2(p, O_CLOEXEC) != 0) {
      std::fprintf(stderr, "ft_launch: pipe: %s\n", std::strerror(errno));
      std::exit(1);
    }
  }
  pid_t pid = fork();
  if (pid < 0) {
    std::fprintf(stderr, "ft_launch: fork: %s\n", std::strerror(errno));
    std::exit(1);
  }
  if (pid == 0) {
    // A process group of its own, for stopping the rank with whatever it started; killed
    // with ft_launch, even by SIGKILL.
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != launcher) {
      _exit(1);  // ft_launch died before prctl took effect
    }
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    dup2(pipes[0][1], 1);
    dup2(pipes[1][1], 2);
    setenv("FT_RANK", std::to_string(r.rank).c_str(), 1);
    setenv("FT_WORLD_SIZE", std::to_string(world).c_str(), 1);
    setenv("FT_STORE", ("file:" + store).c_str(), 1);
    execvp(argv[0], argv);
    std::fprintf(stderr, "ft_launch: cannot run %s: %s\n", argv[0], std::strerror(errno));
    _exit(127);
  }
  setpgid(pid, pid);  // also here: whichever of parent and child runs first
  close(pipes[0][1]);
  close(pipes[1][1]);
  r.pid = pid;
  r.running = true;
  r.streams[0].fd = pipes[0][0];
  r.streams[0].out = 1;
  r.streams[1].fd = pipes[1][0];
  r.streams[1].out = 2;
}

void SignalRunning(std::vector<Rank>& ranks, int signal) {
  for (Rank& r : ranks) {
    if (r.running) {
      kill(-r.pid, signal);
      kill(r.pid, signal);  // in case its setpgid has not run yet
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  int world = 0;
  std::optional<double> timeout;
  double grace = 3.0;
  int i = 1;
  for (; i < argc && argv[i][0] == '-'; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg == "-h" || arg == "--help") {
      Usage(stdout);
      return 0;
    }
    if (i + 1 >= argc) {
      UsageError(arg + " needs a value");
    }
    const char* value = argv[++i];
    if (arg == "-n") {
      char* end = nullptr;
      errno = 0;
      long n = std::strtol(value, &end, 10);
      if (*value == '\0' || *end != '\0' || errno == ERANGE || n < 1 || n > kMaxRanks) {
        UsageError("-n " + std::string(value) + ": the number of ranks must be an integer in "
                   "[1, " + std::to_string(kMaxRanks) + "]");
      }
      world = static_cast<int>(n);
    } else if (arg == "--timeout") {
      timeout = ParseSeconds(value);
      if (!timeout) {
        UsageError("--timeout " + std::string(value) + ": must be a number of seconds > 0");
      }
    } else if (arg == "--grace") {
      std::optional<double> g = ParseSeconds(value);
      if (!g) {
        UsageError("--grace " + std::string(value) + ": must be a number of seconds > 0");
      }
      grace = *g;
    } else {
      UsageError("unknown option " + arg);
    }
  }
  if (world == 0) {
    UsageError("missing -n N, the number of ranks");
  }
  if (i >= argc) {
    UsageError("missing PROGRAM");
  }
  char** program = argv + i;

  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp != nullptr && tmp[0] != '\0' ? tmp : "/tmp") +
                        "/ft-launch-XXXXXX";
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (mkdtemp(buffer.data()) == nullptr) {
    std::fprintf(stderr, "ft_launch: cannot make a store directory %s: %s\n", pattern.c_str(),
                 std::strerror(errno));
    return 1;
  }
  const std::string store(buffer.data());

  struct sigaction action = {};
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) {
    sigaction(s, &action, nullptr);
  }
  signal(SIGPIPE, SIG_IGN);

  std::vector<Rank> ranks(static_cast<size_t>(world));
  const pid_t launcher = getpid();
  for (int r = 0; r < world; ++r) {
    ranks[static_cast<size_t>(r)].rank = r;
    StartRank(ranks[static_cast<size_t>(r)], world, store, program, launcher);
  }

  const Clock::time_point start = Clock::now();
  int exit_code = 0;
  bool stopping = false;
  Clock::time_point kill_at;
  bool killed = false;
  int running = world;
  std::optional<Clock::time_point> drain_until;
  auto stop = [&](int code, const std::string& why) {
    if (stopping) {
      return;
    }
    stopping = true;
    exit_code = code;
    if (running > 0) {
      std::fprintf(stderr, "ft_launch: %s; stopping the other ranks\n", why.c_str());
    } else {
      std::fprintf(stderr, "ft_launch: %s\n", why.c_str());
    }
    SignalRunning(ranks, SIGTERM);
    kill_at = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                 std::chrono::duration<double>(grace));
  };

  for (;;) {
    std::vector<pollfd> fds;
    std::vector<std::pair<Rank*, Stream*>> owners;
    for (Rank& r : ranks) {
      for (Stream& s : r.streams) {
        if (s.fd >= 0) {
          fds.push_back({s.fd, POLLIN, 0});
          owners.emplace_back(&r, &s);
        }
      }
    }
    if (running == 0 && (fds.empty() || (drain_until && Clock::now() > *drain_until))) {
      break;
    }
    poll(fds.data(), fds.size(), 20);
    for (size_t k = 0; k < fds.size(); ++k) {
      if (fds[k].revents == 0) {
        continue;
      }
      char chunk[65536];
      ssize_t n = read(fds[k].fd, chunk, sizeof(chunk));
      if (n < 0 && errno == EINTR) {
        continue;
      }
      Rank& r = *owners[k].first;
      Stream& s = *owners[k].second;
      Forward(r, s, chunk, n > 0 ? static_cast<size_t>(n) : 0, n <= 0);
      if (n <= 0) {
        close(s.fd);
        s.fd = -1;
      }
    }
    for (;;) {
      int status = 0;
      pid_t pid = waitpid(-1, &status, WNOHANG);
      if (pid <= 0) {
        break;
      }
      for (Rank& r : ranks) {
        if (r.pid == pid && r.running) {
          r.running = false;
          r.status = status;
          --running;
          const bool failed = !WIFEXITED(status) || WEXITSTATUS(status) != 0;
          if (failed && !stopping) {
            stop(ExitCodeOf(status), "rank " + std::to_string(r.rank) + " " + Describe(status));
          }
        }
      }
    }
    if (running == 0 && !drain_until) {
      // A rank's own children may hold its pipes open: forward what comes within a second.
      drain_until = Clock::now() + std::chrono::seconds(1);
    }
    if (g_signal != 0 && !stopping) {
      const int s = g_signal;
      stop(128 + s, "got signal " + std::to_string(s) + " (" + strsignal(s) + ")");
    }
    if (timeout && !stopping &&
        Clock::now() - start > std::chrono::duration<double>(*timeout)) {
      stop(kTimedOut, "timed out after " + std::to_string(*timeout) + " s");
    }
    if (stopping && !killed && running > 0 && Clock::now() >= kill_at) {
      std::fprintf(stderr, "ft_launch: ranks still running after %.1f s; sending SIGKILL\n",
                   grace);
      SignalRunning(ranks, SIGKILL);
      killed = true;
    }
  }
  for (Rank& r : ranks) {
    for (Stream& s : r.streams) {
      if (s.fd >= 0) {
        Forward(r, s, nullptr, 0, true);
        close(s.fd);
      }
    }
  }
  std::error_code ignored;
  std::filesystem::remove_all(store, ignored);
  return exit_code;
}
