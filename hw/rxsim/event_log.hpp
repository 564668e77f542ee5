// rxsim's event log, the radio's own witness of what it was asked.
//
// RXSIM_EVENT_LOG=path appends one line per make/unmake and per stream call:
//   <unix seconds, 6 decimals> pid=<pid> <event> [RX|TX] serial=<serial>
// A TX stream is keyed from `activateStream TX` to `deactivateStream TX` (or
// `closeStream TX`), or to the end of the process that holds it: on POSIX each
// activation starts a witness (a forked child in its own process group holding
// only the read end of a pipe) that logs `exitWhileActive TX` with the time the
// holder died, whatever killed it (SIGKILL included), unless the stream was
// deactivated or closed first.
#pragma once

#include <string>

#ifndef _WIN32
#include <sys/types.h>
#endif

namespace rxsim {

// One line in the event log (dir: "RX", "TX" or nullptr), if RXSIM_EVENT_LOG is set.
void logEvent(const std::string &event, const char *dir, const std::string &serial);

#ifndef _WIN32
// The death witness of an active TX stream (see above).
struct TxWitness {
    int fd = -1;
    pid_t child = -1;
};
#else
struct TxWitness {};
#endif

// Starts the witness of a TX stream just activated (POSIX; nothing on Windows).
TxWitness startTxWitness(const std::string &serial);
// The stream was deactivated or closed: the witness ends without a word.
void stopTxWitness(TxWitness &w);

} // namespace rxsim
