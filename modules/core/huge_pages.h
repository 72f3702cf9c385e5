#pragma once

#include <cstddef>

namespace aggnet {

/// Grows the heap by `reserve_bytes` of address space at once (no memory until touched)
/// and marks it for transparent huge pages, so what the program allocates next (the
/// elaborated modules, their queues and links) is faulted in as huge pages: a ring step
/// touches every site's state once, and at 1,000 sites 4 KiB pages outrun the TLB. Call
/// first thing in main. Does nothing where the kernel has no transparent huge pages or
/// the heap cannot grow. Returns the bytes marked (whole huge pages), 0 for none.
std::size_t reserve_heap_on_huge_pages(std::size_t reserve_bytes);

}  // namespace aggnet
