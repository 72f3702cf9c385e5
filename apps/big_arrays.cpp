// Array new and delete of the aggnet executable: an array of 2 MiB or more gets a mapping
// of its own, which the kernel may back with transparent huge pages.
//
// Why: libsystemc's static constructors zero-fill a 3 MiB scratch heap (sc_temp_heap, for
// sc_dt concatenation temporaries) before main. From malloc that is 768 page faults of
// 4 KiB, about a fifth of the CPU time of a small `aggnet run` (docs/validation.md,
// "Speed"); in huge pages it is two. Where the kernel has no huge page to give, the pages
// fault in one by one as before. Not built with the sanitizers, which replace these
// operators themselves (apps/CMakeLists.txt).
#include <sys/mman.h>

#include <cstdint>
#include <mutex>
#include <new>

namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;

struct Mapping {
  void* base;
  std::size_t length;
};
// The big arrays alive (constant-initialized, so usable before any constructor runs).
// More at once than this are rare; they come from malloc.
Mapping g_mappings[16] = {};
std::mutex g_mutex;

std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

// A private mapping of `length` bytes (a multiple of kHugePage) starting on a huge-page
// boundary, so that all of it can be huge pages; nullptr if the kernel refuses.
void* map_aligned(std::size_t length) {
  void* raw = ::mmap(nullptr, length + kHugePage, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  const auto start = reinterpret_cast<std::uintptr_t>(raw);
  const auto aligned = round_up(start, kHugePage);
  const auto end = start + length + kHugePage;
  if (aligned > start) ::munmap(raw, aligned - start);
  if (end > aligned + length)
    ::munmap(reinterpret_cast<void*>(aligned + length), end - aligned - length);
  return reinterpret_cast<void*>(aligned);
}

bool remember(void* base, std::size_t length) {
  std::lock_guard<std::mutex> lock(g_mutex);
  for (auto& m : g_mappings) {
    if (!m.base) {
      m = {base, length};
      return true;
    }
  }
  return false;
}

// Unmaps `p` if it is one of the big arrays.
bool forget(void* p) {
  std::lock_guard<std::mutex> lock(g_mutex);
  for (auto& m : g_mappings) {
    if (m.base == p) {
      ::munmap(m.base, m.length);
      m = {};
      return true;
    }
  }
  return false;
}

void* map_big_array(std::size_t n) {
  const std::size_t length = round_up(n, kHugePage);
  void* p = map_aligned(length);
  if (!p) return nullptr;
  if (!remember(p, length)) {
    ::munmap(p, length);
    return nullptr;
  }
  ::madvise(p, length, MADV_HUGEPAGE);  // advice: without THP the pages are 4 KiB
  return p;
}

}  // namespace

void* operator new[](std::size_t n) {
  if (n >= kHugePage) {
    if (void* p = map_big_array(n)) return p;
  }
  return ::operator new(n);
}

void operator delete[](void* p) noexcept {
  if (p && forget(p)) return;
  ::operator delete(p);
}

void operator delete[](void* p, std::size_t) noexcept { ::operator delete[](p); }
