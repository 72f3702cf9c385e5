#include "common/atomic_file.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace aggnet {

void commit_file(const std::string& temporary, const std::string& path) {
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    throw std::runtime_error("cannot move " + temporary + " to " + path);
  }
}

void write_file_atomically(const std::string& path, const std::string& content) {
  const std::string temporary = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << content;
    out.flush();
    if (!out) {
      std::remove(temporary.c_str());
      throw std::runtime_error("cannot write " + path);
    }
  }
  commit_file(temporary, path);
}

}  // namespace aggnet
