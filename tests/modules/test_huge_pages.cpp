// reserve_heap_on_huge_pages: the heap grows by the reserve at once and the kernel marks it
// for huge pages ("hg" in its VmFlags); what the program allocates afterwards is ordinary
// memory that reads back what was written.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "modules/core/huge_pages.h"

namespace aggnet {
namespace {

// AddressSanitizer's allocator replaces glibc's: it never grows the brk heap (so nothing is
// reserved), and its own mappings do not fit under a data limit.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitizerAllocator = true;
#else
constexpr bool kSanitizerAllocator = false;
#endif

std::size_t huge_page_bytes_or_zero() {
  std::ifstream enabled("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  if (!std::getline(enabled, modes) || modes.find("[never]") != std::string::npos) return 0;
  std::ifstream size("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size");
  std::size_t bytes = 0;
  return size >> bytes ? bytes : 0;
}

// The VmFlags lines of the [heap] mappings in /proc/self/smaps (marking part of the heap
// splits it), each ending in a space; empty if there is none.
std::string heap_vm_flags() {
  std::ifstream smaps("/proc/self/smaps");
  std::string line, flags;
  bool in_heap = false;
  while (std::getline(smaps, line)) {
    // A mapping's header starts with its address range ("begin-end"), a field with a key.
    const bool header = line.find('-') < line.find(' ');
    if (header) in_heap = line.find("[heap]") != std::string::npos;
    if (in_heap && line.rfind("VmFlags:", 0) == 0) flags += line + " ";
  }
  return flags;
}

// Under an address-space or data limit the reserve would count against the limit (and the
// memory guard's headroom): nothing is reserved. First, while the heap has no reserve yet
// (ctest also runs each test in a process of its own).
TEST(HugePages, NothingUnderADataLimit) {
  if (kSanitizerAllocator) GTEST_SKIP() << "a data limit stops AddressSanitizer's own mappings";
  struct rlimit saved {};
  ASSERT_EQ(getrlimit(RLIMIT_DATA, &saved), 0);
  struct rlimit limited = saved;
  limited.rlim_cur = std::uint64_t{1} << 40;
  if (saved.rlim_max != RLIM_INFINITY && saved.rlim_max < limited.rlim_cur) {
    limited.rlim_cur = saved.rlim_max;
  }
  ASSERT_EQ(setrlimit(RLIMIT_DATA, &limited), 0);
  const std::size_t marked = reserve_heap_on_huge_pages(std::size_t{64} << 20);
  ASSERT_EQ(setrlimit(RLIMIT_DATA, &saved), 0);
  EXPECT_EQ(marked, 0u);
}

TEST(HugePages, ReserveMarksTheGrownHeap) {
  constexpr std::size_t kReserveBytes = std::size_t{64} << 20;
  const std::size_t page = huge_page_bytes_or_zero();
  const std::size_t marked = reserve_heap_on_huge_pages(kReserveBytes);
  if (page == 0 || kSanitizerAllocator) {
    EXPECT_EQ(marked, 0u);
    return;
  }
  EXPECT_EQ(marked % page, 0u);
  // Aligning the heap's ends inward loses at most a huge page at each.
  EXPECT_GE(marked, kReserveBytes - 2 * page);
  EXPECT_NE(heap_vm_flags().find(" hg "), std::string::npos) << heap_vm_flags();
}

TEST(HugePages, AllocationsAfterTheReserveKeepTheirContent) {
  reserve_heap_on_huge_pages(std::size_t{16} << 20);
  // 8 MiB in small blocks (from the heap) and one large one.
  constexpr std::size_t kBlocks = 32768;
  constexpr std::size_t kWords = 32;
  std::vector<std::unique_ptr<std::uint64_t[]>> blocks;
  for (std::size_t b = 0; b < kBlocks; ++b) {
    blocks.emplace_back(new std::uint64_t[kWords]);
    for (std::size_t w = 0; w < kWords; ++w) blocks.back()[w] = b * kWords + w + 1;
  }
  std::vector<std::uint32_t> large(std::size_t{4} << 20);
  for (std::size_t i = 0; i < large.size(); ++i) large[i] = static_cast<std::uint32_t>(i * 7);
  for (std::size_t b = 0; b < kBlocks; ++b) {
    for (std::size_t w = 0; w < kWords; ++w) ASSERT_EQ(blocks[b][w], b * kWords + w + 1);
  }
  for (std::size_t i = 0; i < large.size(); ++i) ASSERT_EQ(large[i], i * 7);
}

}  // namespace
}  // namespace aggnet
