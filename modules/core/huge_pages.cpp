#include "modules/core/huge_pages.h"

#include <malloc.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace aggnet {
namespace {

constexpr std::size_t kMaxPadBytes = std::size_t{1} << 30;
constexpr int kDefaultTopPadBytes = 128 << 10;  // mallopt(3)

struct AddressRange {
  std::uintptr_t begin = 0;
  std::uintptr_t end = 0;
};

// The brk heap of this process, from /proc/self/maps; empty where there is none.
AddressRange heap_range() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (line.find("[heap]") == std::string::npos) continue;
    std::istringstream in(line);
    AddressRange r;
    char dash = 0;
    in >> std::hex >> r.begin >> dash >> r.end;
    return in ? r : AddressRange{};
  }
  return {};
}

// The size of a transparent huge page, 0 where the kernel has them disabled.
std::uintptr_t huge_page_bytes() {
  std::ifstream enabled("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  if (!std::getline(enabled, modes) || modes.find("[never]") != std::string::npos) return 0;
  std::ifstream size("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size");
  std::uintptr_t bytes = 0;
  return size >> bytes ? bytes : 0;
}

// Whether reserving address space costs nothing: no RLIMIT_AS or RLIMIT_DATA (the memory
// guard counts mapped address space against them, common/host.cpp) and no strict
// overcommit (which would charge the untouched reserve).
bool address_space_is_free() {
  for (const int resource : {RLIMIT_AS, RLIMIT_DATA}) {
    struct rlimit limit {};
    if (getrlimit(resource, &limit) != 0 || limit.rlim_cur != RLIM_INFINITY) return false;
  }
  std::ifstream overcommit("/proc/sys/vm/overcommit_memory");
  int mode = 0;
  return overcommit >> mode && mode != 2;
}

// Grows the heap once by `bytes` through malloc's top pad: small blocks (below the mmap
// threshold) until the break moves. The pad is then reset to glibc's default and the trim
// threshold raised, so the untouched reserve stays and later growth is ordinary.
bool grow_heap_by(std::size_t bytes) {
  if (mallopt(M_TOP_PAD, static_cast<int>(bytes)) == 0) return false;
  const void* old_break = sbrk(0);
  constexpr std::size_t kBlockBytes = 64 << 10;
  void* held[64] = {};
  for (void*& block : held) {
    block = std::malloc(kBlockBytes);
    if (sbrk(0) != old_break) break;
  }
  const bool grown = sbrk(0) != old_break;
  mallopt(M_TOP_PAD, kDefaultTopPadBytes);
  if (grown) mallopt(M_TRIM_THRESHOLD, static_cast<int>(2 * kMaxPadBytes - 1));
  for (void* block : held) std::free(block);
  return grown;
}

}  // namespace

std::size_t reserve_heap_on_huge_pages(std::size_t reserve_bytes) {
  const std::uintptr_t page = huge_page_bytes();
  if (page == 0 || (page & (page - 1)) != 0 || reserve_bytes > kMaxPadBytes) return 0;
  if (!address_space_is_free()) return 0;
  if (!grow_heap_by(reserve_bytes)) return 0;
  const AddressRange heap = heap_range();
  const std::uintptr_t begin = (heap.begin + page - 1) & ~(page - 1);
  const std::uintptr_t end = heap.end & ~(page - 1);
  if (end <= begin) return 0;
  return madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE) == 0 ? end - begin : 0;
}

}  // namespace aggnet
