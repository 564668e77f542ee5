// rxsim's event log and the TX witness (see event_log.hpp).
//
// Portable C++17 plus getpid (POSIX) / _getpid (Windows).
#include "event_log.hpp"

#include <chrono>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#ifdef _WIN32
#include <process.h>
#define RXSIM_GETPID _getpid
#else
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#define RXSIM_GETPID getpid
#endif

namespace rxsim {

void logEvent(const std::string &event, const char *dir, const std::string &serial) {
    const char *path = std::getenv("RXSIM_EVENT_LOG");
    if (path == nullptr || *path == '\0') return;
    auto now = std::chrono::system_clock::now().time_since_epoch();
    double secs = std::chrono::duration_cast<std::chrono::microseconds>(now).count() / 1e6;
    char line[256];
    if (dir != nullptr)
        std::snprintf(line, sizeof line, "%.6f pid=%ld %s %s serial=%s\n", secs,
                      long(RXSIM_GETPID()), event.c_str(), dir, serial.c_str());
    else
        std::snprintf(line, sizeof line, "%.6f pid=%ld %s serial=%s\n", secs,
                      long(RXSIM_GETPID()), event.c_str(), serial.c_str());
    // One fwrite of one line to a file opened in append mode: lines from several
    // processes do not interleave.
    if (FILE *f = std::fopen(path, "ab")) {
        std::fwrite(line, 1, std::strlen(line), f);
        std::fclose(f);
    }
}

#ifndef _WIN32
namespace {

size_t putUnsigned(char *out, unsigned long long v, int minDigits) {
    char tmp[24];
    size_t n = 0;
    do {
        tmp[n++] = char('0' + v % 10);
        v /= 10;
    } while (v != 0 || int(n) < minDigits);
    for (size_t i = 0; i < n; i++) out[i] = tmp[n - 1 - i];
    return n;
}

size_t putText(char *out, const char *s, size_t room) {
    size_t n = 0;
    while (s[n] != '\0' && n < room) {
        out[n] = s[n];
        n++;
    }
    return n;
}

} // namespace

// The death witness of an active TX stream: fork a child that waits
// for the end of the pipe; a byte means the stream was deactivated (nothing logged),
// end of file without one means the holder died with the stream active: the child
// logs `exitWhileActive TX` then. The child does async-signal-safe calls only.
TxWitness startTxWitness(const std::string &serial) {
    TxWitness w;
    const char *path = std::getenv("RXSIM_EVENT_LOG");
    if (path == nullptr || *path == '\0') return w;
    int fds[2];
    if (pipe(fds) != 0) return w;
    // Everything the child writes is prepared before the fork.
    std::string pathCopy(path);
    char head[64];
    std::snprintf(head, sizeof head, " pid=%ld exitWhileActive TX serial=", long(RXSIM_GETPID()));
    std::string tail = std::string(head) + serial + "\n";
    long maxFd = sysconf(_SC_OPEN_MAX);
    if (maxFd < 0 || maxFd > 65536) maxFd = 65536;
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return w;
    }
    if (pid == 0) {
        // Out of the terminal's process group: a Ctrl-C for the holder is not ours.
        setpgid(0, 0);
        signal(SIGINT, SIG_IGN);
        signal(SIGQUIT, SIG_IGN);
        signal(SIGHUP, SIG_IGN);
        signal(SIGTSTP, SIG_IGN);
        for (long fd = 0; fd < maxFd; fd++)
            if (fd != fds[0]) close(int(fd));
        char b;
        ssize_t r;
        do {
            r = read(fds[0], &b, 1);
        } while (r < 0 && errno == EINTR);
        if (r == 1) _exit(0);
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        char line[512];
        size_t n = putUnsigned(line, (unsigned long long)ts.tv_sec, 1);
        line[n++] = '.';
        n += putUnsigned(line + n, (unsigned long long)(ts.tv_nsec / 1000), 6);
        n += putText(line + n, tail.c_str(), sizeof line - n);
        int f = open(pathCopy.c_str(), O_WRONLY | O_APPEND | O_CREAT, 0644);
        if (f >= 0) {
            ssize_t ignored = write(f, line, n);
            (void)ignored;
            close(f);
        }
        _exit(0);
    }
    close(fds[0]);
    // Not inherited by anything the holder starts later.
    fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    w.fd = fds[1];
    w.child = pid;
    return w;
}

// The stream was deactivated or closed: the witness ends without a word.
void stopTxWitness(TxWitness &w) {
    if (w.fd < 0) return;
    char d = 'd';
    ssize_t ignored = write(w.fd, &d, 1);
    (void)ignored;
    close(w.fd);
    w.fd = -1;
    if (w.child > 0) waitpid(w.child, nullptr, 0);
    w.child = -1;
}
#else
TxWitness startTxWitness(const std::string &) { return {}; }
void stopTxWitness(TxWitness &) {}
#endif

} // namespace rxsim
