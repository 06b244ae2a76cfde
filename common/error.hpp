#pragma once
// Typed errors: every failure dgnn reports is one of these, carrying where and what was expected.
// Only main() catches them, prints what() as one line, and (under MPI) aborts the job.
#include <cstdint>
#include <stdexcept>
#include <string>

namespace dgnn {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Bad contents of an input file; the message starts with "path:LINE: " when a line is known.
class InputError : public Error {
 public:
  InputError(const std::string& path, int64_t line, const std::string& what)
      : Error(format(path, line, what)), line_(line) {}
  int64_t line() const { return line_; }  // 0 when none is known
  static std::string format(const std::string& path, int64_t line, const std::string& what) {
    return line > 0 ? path + ":" + std::to_string(line) + ": " + what : path + ": " + what;
  }

 private:
  int64_t line_ = 0;
};

// An InputError that every rank of a job meets alike: a check made after a collective (a file
// with no data lines at all, read in parts by every rank). Reported once, by rank 0.
class AgreedInputError : public InputError {
 public:
  using InputError::InputError;
};

// The same, raised on every rank with one rank's message (already formatted).
class AgreedError : public Error {
 public:
  using Error::Error;
};

// A file that cannot be opened, read or written.
class IoError : public Error {
 public:
  using Error::Error;
};

// An impossible or contradictory option (command line or API config).
class OptionError : public Error {
 public:
  using Error::Error;
};

// Tensor shapes that do not fit an operation.
class ShapeError : public Error {
 public:
  using Error::Error;
};

// A device (CUDA) that is missing or failed.
class DeviceError : public Error {
 public:
  using Error::Error;
};

// A failure in inter-process communication.
class CommError : public Error {
 public:
  using Error::Error;
};

// `message` as one line: a line break in it (a file name holding a newline) is written \n or \r,
// as a C string would spell it, so that an error stays the one line it is meant to be.
inline std::string one_line(const std::string& message) {
  std::string out;
  out.reserve(message.size());
  for (char c : message) {
    if (c == '\n')
      out += "\\n";
    else if (c == '\r')
      out += "\\r";
    else
      out += c;
  }
  return out;
}

}  // namespace dgnn

// Precondition check that throws a typed error naming the call site.
#define DGNN_CHECK(cond, ErrType, msg)                                                          \
  do {                                                                                          \
    if (!(cond))                                                                                \
      throw ErrType(std::string(msg) + " [" + __FILE__ + ":" + std::to_string(__LINE__) + "]"); \
  } while (0)
