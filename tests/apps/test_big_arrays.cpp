// apps/big_arrays.cpp: arrays of 2 MiB or more get their own huge-page-aligned mapping,
// advised for transparent huge pages and unmapped by delete[]; smaller ones, and big ones
// beyond the table of 16, come from malloc as before.
#include <gtest/gtest.h>
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

bool mapped(std::uintptr_t address) {
  unsigned char resident = 0;
  const auto page_size = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  void* page = reinterpret_cast<void*>(address / page_size * page_size);
  return mincore(page, 1, &resident) == 0 || errno != ENOMEM;
}

// The VmFlags line of the mapping that holds `p` (/proc/self/smaps).
std::string vm_flags(const void* p) {
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    std::uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream range(line);
    if (range >> std::hex >> lo >> dash >> hi && dash == '-') inside = lo <= at && at < hi;
    if (inside && line.rfind("VmFlags:", 0) == 0) return line;
  }
  return "";
}

TEST(BigArrays, BigArrayIsAHugePageAlignedZeroedMapping) {
  char* p = new char[3 * kMiB];
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % (2 * kMiB), 0u);
  EXPECT_TRUE(std::all_of(p, p + 3 * kMiB, [](char c) { return c == 0; }));
  p[3 * kMiB - 1] = 1;                                                 // writable to its end
  if (std::ifstream("/sys/kernel/mm/transparent_hugepage/enabled")) {  // a THP kernel
    EXPECT_NE(vm_flags(p).find(" hg"), std::string::npos) << vm_flags(p);
  }
  const auto address = reinterpret_cast<std::uintptr_t>(p);
  EXPECT_TRUE(mapped(address));
  delete[] p;
  EXPECT_FALSE(mapped(address));
}

TEST(BigArrays, SmallArrayComesFromMalloc) {
  char* p = new char[1024];
  EXPECT_GE(malloc_usable_size(p), 1024u);  // only malloc's blocks have a usable size
  delete[] p;
}

TEST(BigArrays, BeyondTheTableBigArraysComeFromMalloc) {
  std::vector<char*> arrays;
  for (int i = 0; i < 20; ++i) arrays.push_back(new char[2 * kMiB]);
  const auto aligned = std::count_if(arrays.begin(), arrays.end(), [](char* p) {
    return reinterpret_cast<std::uintptr_t>(p) % (2 * kMiB) == 0;
  });
  EXPECT_EQ(aligned, 16);
  for (char* p : arrays) {
    p[2 * kMiB - 1] = 1;
    delete[] p;
  }
  char* again = new char[2 * kMiB];  // the table has room again
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(again) % (2 * kMiB), 0u);
  delete[] again;
}

}  // namespace
