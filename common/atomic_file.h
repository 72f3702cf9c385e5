// Output files that appear whole or not at all, without ever replacing what is not a
// regular file.
#pragma once

#include <string>
#include <vector>

namespace aggnet {

/// The output name of the standard output ("-"), as the outputs of every command take it.
inline bool is_stdout(const std::string& path) { return path == "-"; }

/// Writes `content` to `path` ("-": the standard output, through std::cout). A regular file (or a
/// new one) is written through a new temporary file (create_temporary) in the same directory and a
/// rename, so a crash or
/// an error never leaves a half-written file at `path`; a symbolic link is followed and its target
/// replaced, never the link. Anything else that exists at `path` (a character device such as
/// /dev/null or /dev/stdout, a FIFO) is written through in place: renaming over it would
/// replace the device node (as root, `--json /dev/null` once replaced /dev/null).
/// Errors: std::runtime_error naming the path if it cannot be written or is a directory.
void write_file_atomically(const std::string& path, const std::string& content);

/// Moves a finished temporary file to `path` with the rules of write_file_atomically:
/// a rename for regular files (same directory), a copy into anything else (then the
/// temporary is removed). Errors: std::runtime_error naming both paths.
void commit_file(const std::string& temporary, const std::string& path);

/// True when `path` is "-" or exists and is neither a regular file nor a link to one:
/// outputs to it are written through, never renamed over.
bool is_special_file(const std::string& path);

/// Creates a new, empty file named `prefix`, a part unique to this call, then `suffix`,
/// and returns its name; `fd`, if given, receives it open for writing (else it is closed).
/// It is created with O_EXCL: whatever already has the name, a link planted at a
/// predictable name included, is never opened or written through.
/// Errors: std::runtime_error naming the prefix.
std::string create_temporary(const std::string& prefix, const std::string& suffix,
                             int* fd = nullptr);

/// A new empty file (create_temporary) to build an output for `path` in before commit_file:
/// next to it (`path`.UNIQUE`suffix`) for a regular file, in the system's temporary
/// directory for a special file (no stray files in /dev for `--vcd /dev/null`).
std::string temporary_path_for(const std::string& path, const std::string& suffix);

/// The outputs of one command, which appear all or none. add() stages each in a temporary
/// (next to a regular file's target, in the temporary directory for a special file);
/// commit() writes the special files through first (the only writes that can still fail
/// for lack of room, like /dev/full), then renames the regular ones. A failure leaves no
/// output of the batch committed except special files already written through; the
/// destructor removes the temporaries not committed.
class OutputBatch {
 public:
  OutputBatch() = default;
  OutputBatch(const OutputBatch&) = delete;
  OutputBatch& operator=(const OutputBatch&) = delete;
  ~OutputBatch();

  /// Stages `content` for `path`. Errors: std::runtime_error naming the path.
  void add(const std::string& path, const std::string& content);
  /// Takes over a temporary already written (e.g. a streamed waveform) as the output `path`.
  void adopt(const std::string& temporary, const std::string& path);
  /// Commits every staged output. Errors: std::runtime_error naming the path.
  void commit();

 private:
  struct Staged {
    std::string temporary, path;
    bool special = false;
  };
  std::vector<Staged> staged_;
};

}  // namespace aggnet
