// Arrival-aligned sends: closed form for 2 or 3 members, else the minimum cycle mean (exact);
// the lexicographic LP (GLPK) as a second method.
#include "model/send_alignment.h"

#include <glpk.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace aggnet {
namespace {

using Offsets = std::vector<std::uint64_t>;

void require_square(const ArrivalMatrix& arrival_ps) {
  for (const auto& row : arrival_ps) {
    if (row.size() != arrival_ps.size()) {
      throw std::invalid_argument("send alignment: the arrival matrix has " +
                                  std::to_string(arrival_ps.size()) + " rows but a row of " +
                                  std::to_string(row.size()) + " entries (must be square)");
    }
  }
}

/// Shifts the offsets so the smallest is 0 and recomputes every residual exactly.
SenderAlignment finish(const ArrivalMatrix& arrival_ps, Offsets offsets, std::string method) {
  if (!offsets.empty()) {
    const std::uint64_t lowest = *std::min_element(offsets.begin(), offsets.end());
    for (auto& o : offsets) o -= lowest;
  }
  SenderAlignment result;
  result.offset_ps = std::move(offsets);
  for (std::size_t j = 0; j < arrival_ps.size(); ++j) {
    const std::uint64_t skew = residual_skew_ps(arrival_ps, result.offset_ps, j);
    result.residual_skew_ps.push_back(skew);
    result.max_residual_skew_ps = std::max(result.max_residual_skew_ps, skew);
  }
  result.method = std::move(method);
  return result;
}

/// Members a = 0, b = 1, c = 2. Receiver c is aligned by o_b - o_a = a_ac - a_bc and
/// receiver b by o_c - o_a = a_ab - a_cb; receiver a is then aligned exactly when the
/// cyclic asymmetry (a_ab - a_ba) + (a_bc - a_cb) + (a_ca - a_ac) is 0 (otherwise no
/// offsets align all three, and nullopt sends the caller to the general method).
std::optional<Offsets> triad_closed_form(const ArrivalMatrix& arrival_ps) {
  const auto a = [&](int i, int j) { return static_cast<std::int64_t>(arrival_ps[i][j]); };
  const std::int64_t cyclic = (a(0, 1) - a(1, 0)) + (a(1, 2) - a(2, 1)) + (a(2, 0) - a(0, 2));
  if (cyclic != 0) return std::nullopt;
  const std::int64_t b = a(0, 2) - a(1, 2);
  const std::int64_t c = a(0, 1) - a(2, 1);
  const std::int64_t lowest = std::min({std::int64_t{0}, b, c});
  return Offsets{static_cast<std::uint64_t>(-lowest), static_cast<std::uint64_t>(b - lowest),
                 static_cast<std::uint64_t>(c - lowest)};
}

// --- Minimum cycle mean ---------------------------------------------------------------
//
// The LP's optimum (below) without an LP, and over whole-ps offsets. For a bound z on the
// skew, "receiver j hears i at most z after k" for every j other than i and k are the
// difference constraints o_i - o_k <= z + w[k][i], w[k][i] = min_j (a_kj - a_ij): an edge
// k -> i of weight z + w[k][i]. They are feasible exactly when no cycle is negative, so
// the least skew is z* = -(the minimum cycle mean of w) (Karp's algorithm), and whole-ps
// offsets reach ceil(z*) at best. With z = ceil(z*) the least offsets >= 0 are minus the
// shortest distances along the reversed edges from a source joined to every member by
// 0-weight edges (Bellman-Ford), integers since every weight is. Being least for every
// member, they also give the earliest last arrival and the least total waiting: the
// LP's second and third stages. O(n^3), exact integer arithmetic.

__extension__ using Wide = __int128;

// The O(n^3) loops also in AVX2 and AVX-512, chosen at run time by what the processor
// has: the baseline (SSE2) has no 64-bit compare to vectorize their minima with. The same
// integer operations, so the same results.
#if defined(__x86_64__) && defined(__GNUC__)
#define AGGNET_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define AGGNET_VECTOR_CLONES
#endif

/// A square matrix of `n` x `n` in one block, row by row.
template <class T>
struct Square {
  std::size_t n = 0;
  std::vector<T> cells;
  explicit Square(std::size_t size, T value = T{}) : n(size), cells(size * size, value) {}
  T* row(std::size_t i) { return cells.data() + i * n; }
  const T* row(std::size_t i) const { return cells.data() + i * n; }
};
using Weights = Square<std::int64_t>;

/// Latencies at most 2^62 ps (53 days), so that their differences fit in 64 bits (the
/// diagonal is ignored).
void require_representable(const ArrivalMatrix& arrival_ps) {
  constexpr std::uint64_t kMaxPs = std::uint64_t{1} << 62;
  for (std::size_t i = 0; i < arrival_ps.size(); ++i) {
    for (std::size_t j = 0; j < arrival_ps.size(); ++j) {
      if (i != j && arrival_ps[i][j] > kMaxPs) {
        throw std::invalid_argument("send alignment: a latency of " +
                                    std::to_string(arrival_ps[i][j]) + " ps (at most 2^62 ps)");
      }
    }
  }
}

/// The least of a[j] - b[j] over j in [from, to).
std::int64_t least_difference(const std::int64_t* a, const std::int64_t* b, std::size_t from,
                              std::size_t to, std::int64_t least) {
  for (std::size_t j = from; j < to; ++j) least = std::min(least, a[j] - b[j]);
  return least;
}

/// w[k][i] = min over j != i, k of (a_kj - a_ij) for the rows k from `first` on (`a` as
/// int64, row by row; its diagonal is not read).
AGGNET_VECTOR_CLONES void fill_skew_weights(const Square<std::int64_t>& a, std::size_t first,
                                            Weights& w) {
  const std::size_t n = a.n;
  for (std::size_t k = first; k < n; ++k) {
    for (std::size_t i = 0; i < n; ++i) {
      if (i == k) continue;
      const std::size_t low = std::min(i, k), high = std::max(i, k);
      std::int64_t least = std::numeric_limits<std::int64_t>::max();
      least = least_difference(a.row(k), a.row(i), 0, low, least);
      least = least_difference(a.row(k), a.row(i), low + 1, high, least);
      w.row(k)[i] = least_difference(a.row(k), a.row(i), high + 1, n, least);
    }
  }
}

/// fill_skew_weights for the rows k..k+7 in one pass over each row a_i (eight minima at
/// a time, not one chain of them), where a_kk - a_ik exceeds every a_kj - a_ij: j = k
/// needs no exclusion. w[k][k] is left 0.
AGGNET_VECTOR_CLONES void fill_eight_skew_weights(const Square<std::int64_t>& a, std::size_t k,
                                                  Weights& w) {
  const std::size_t n = a.n;
  const std::int64_t *a0 = a.row(k), *a1 = a.row(k + 1), *a2 = a.row(k + 2), *a3 = a.row(k + 3);
  const std::int64_t *a4 = a.row(k + 4), *a5 = a.row(k + 5), *a6 = a.row(k + 6), *a7 = a.row(k + 7);
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t* b = a.row(i);
    std::int64_t m0 = std::numeric_limits<std::int64_t>::max(), m1 = m0, m2 = m0, m3 = m0;
    std::int64_t m4 = m0, m5 = m0, m6 = m0, m7 = m0;
    const auto take = [&](std::size_t from, std::size_t to) {
      for (std::size_t j = from; j < to; ++j) {
        const std::int64_t x = b[j];
        m0 = std::min(m0, a0[j] - x);
        m1 = std::min(m1, a1[j] - x);
        m2 = std::min(m2, a2[j] - x);
        m3 = std::min(m3, a3[j] - x);
        m4 = std::min(m4, a4[j] - x);
        m5 = std::min(m5, a5[j] - x);
        m6 = std::min(m6, a6[j] - x);
        m7 = std::min(m7, a7[j] - x);
      }
    };
    take(0, i);
    take(i + 1, n);
    w.row(k)[i] = m0, w.row(k + 1)[i] = m1, w.row(k + 2)[i] = m2, w.row(k + 3)[i] = m3;
    w.row(k + 4)[i] = m4, w.row(k + 5)[i] = m5, w.row(k + 6)[i] = m6, w.row(k + 7)[i] = m7;
  }
  for (std::size_t r = k; r < k + 8; ++r) w.row(r)[r] = 0;
}

/// w[k][i] = min over j != i, k of (a_kj - a_ij): the weight of the edge k -> i (`blocked`:
/// eight rows k per pass where the latencies allow).
Weights skew_weights(const ArrivalMatrix& arrival_ps, bool blocked) {
  const std::size_t n = arrival_ps.size();
  Square<std::int64_t> a(n);
  std::int64_t largest = 0;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      a.row(i)[j] = static_cast<std::int64_t>(arrival_ps[i][j]);
      if (i != j) largest = std::max(largest, a.row(i)[j]);
    }
  }
  Weights w(n);
  std::size_t k = 0;
  // A diagonal of 2 x the largest latency + 1 puts a_kk - a_ik above every a_kj - a_ij
  // (at most the largest latency), in 64 bits up to latencies of 2^62 - 1 ps.
  if (blocked && largest < std::numeric_limits<std::int64_t>::max() / 2) {
    for (std::size_t i = 0; i < n; ++i) a.row(i)[i] = 2 * largest + 1;
    for (; k + 8 <= n; k += 8) fill_eight_skew_weights(a, k, w);
  }
  fill_skew_weights(a, k, w);
  return w;
}

/// The largest |w| off the diagonal: walks of n edges stay within n times it.
std::uint64_t largest_weight(const Weights& w) {
  std::uint64_t most = 0;
  for (std::size_t k = 0; k < w.n; ++k)
    for (std::size_t i = 0; i < w.n; ++i)
      if (i != k) {
        const std::int64_t x = w.row(k)[i];
        most = std::max(most,
                        x < 0 ? 0 - static_cast<std::uint64_t>(x) : static_cast<std::uint64_t>(x));
      }
  return most;
}

/// Whether every sum of up to `terms` values of at most `largest` in magnitude, and
/// products of such a sum with a count up to `terms`, fit in 62 bits: then 64-bit
/// integers give the same results as 128-bit ones.
bool fits_in_64_bits(std::uint64_t largest, std::uint64_t terms) {
  const Wide bound = static_cast<Wide>(largest) * terms * terms;
  return bound < (Wide{1} << 62);
}

/// now[v] = min(now[v], from + out[v]) for every v but u: the walks one edge longer
/// through u.
template <class T>
void extend_walks(T* now, const std::int64_t* out, T from, std::size_t u, std::size_t n) {
  for (std::size_t v = 0; v < u; ++v) now[v] = std::min(now[v], from + out[v]);
  for (std::size_t v = u + 1; v < n; ++v) now[v] = std::min(now[v], from + out[v]);
}
AGGNET_VECTOR_CLONES void extend_walks_narrow(std::int64_t* now, const std::int64_t* out,
                                              std::int64_t from, std::size_t u, std::size_t n) {
  extend_walks(now, out, from, u, n);
}
void extend_walks_of(std::int64_t* now, const std::int64_t* out, std::int64_t from, std::size_t u,
                     std::size_t n) {
  extend_walks_narrow(now, out, from, u, n);
}
void extend_walks_of(Wide* now, const std::int64_t* out, Wide from, std::size_t u, std::size_t n) {
  extend_walks(now, out, from, u, n);
}

/// walk[k][v]: the least weight of a k-edge walk ending at v, starting anywhere (n >= 2:
/// every v has a walk of every length).
template <class T>
std::vector<T> least_walks(const Weights& w) {
  const std::size_t n = w.n;
  std::vector<T> walk((n + 1) * n, std::numeric_limits<T>::max());
  std::fill(walk.begin(), walk.begin() + static_cast<std::ptrdiff_t>(n), T{0});
  for (std::size_t k = 1; k <= n; ++k) {
    const T* before = walk.data() + (k - 1) * n;
    T* now = walk.data() + k * n;
    for (std::size_t u = 0; u < n; ++u)  // row by row: w[u] is read in order
      extend_walks_of(now, w.row(u), before[u], u, n);
  }
  return walk;
}

/// Karp's mean: min over v of max over k < n of (walk[n][v] - walk[k][v]) / (n - k), as
/// num / den.
template <class T>
std::pair<Wide, Wide> minimum_cycle_mean(const std::vector<T>& walk, std::size_t n) {
  const auto at = [&](std::size_t k, std::size_t v) { return static_cast<Wide>(walk[k * n + v]); };
  Wide best_num = 0, best_den = 0;
  for (std::size_t v = 0; v < n; ++v) {
    Wide num = at(n, v) - at(0, v), den = static_cast<Wide>(n);
    for (std::size_t k = 1; k < n; ++k) {
      const Wide a = at(n, v) - at(k, v), b = static_cast<Wide>(n - k);
      if (a * den > num * b) num = a, den = b;
    }
    if (best_den == 0 || num * best_den < best_num * den) best_num = num, best_den = den;
  }
  return {best_num, best_den};
}

/// ceil(-num / den) = -floor(num / den), den > 0.
std::int64_t whole_skew(Wide num, Wide den) {
  const Wide floor = num / den - (num % den != 0 && num < 0 ? 1 : 0);
  return static_cast<std::int64_t>(-floor);
}

/// The least skew whole-ps offsets can reach: ceil(-(the minimum cycle mean of w)) (Karp;
/// n >= 2).
std::int64_t least_whole_skew(const Weights& w, bool narrow) {
  const auto [best_num, best_den] = narrow ? minimum_cycle_mean(least_walks<std::int64_t>(w), w.n)
                                           : minimum_cycle_mean(least_walks<Wide>(w), w.n);
  return whole_skew(best_num, best_den);
}

/// The least offsets >= 0 with o_i - o_k <= z + w[k][i]: y = -o is the greatest solution
/// of y <= 0 and y_k - y_i <= z + w[k][i], the shortest distances along edges i -> k
/// from a source at distance 0 from every member. nullopt if they do not converge: a
/// negative cycle, z is below the least skew.
template <class T>
std::optional<Offsets> try_least_offsets(const Weights& w, std::int64_t z) {
  const std::size_t n = w.n;
  std::vector<T> dist(n, 0);
  for (std::size_t round = 0; round <= n; ++round) {
    bool changed = false;
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t k = 0; k < n; ++k) {
        if (k == i) continue;
        const T through = dist[i] + w.row(k)[i] + z;
        if (through < dist[k]) dist[k] = through, changed = true;
      }
    }
    if (!changed) break;
    if (round == n) return std::nullopt;
  }
  Offsets offsets;
  for (const T d : dist) offsets.push_back(static_cast<std::uint64_t>(-d));
  return offsets;
}

template <class T>
Offsets least_offsets(const Weights& w, std::int64_t z) {
  if (auto offsets = try_least_offsets<T>(w, z)) return std::move(*offsets);
  throw std::logic_error("send alignment: a negative cycle at the least skew");
}

// --- Policy iteration -----------------------------------------------------------------
//
// Karp's walks cost O(n^3). Howard's policy iteration meets a cycle of the least mean in
// a few O(n^2) passes in practice (not a proven bound: the passes are capped), and one
// cycle C decides the least whole skew: with z = ceil(-mean(C)), C is negative at z - 1,
// so z - 1 is infeasible; if the shortest paths at z converge, z is feasible, so z is
// Karp's ceil(-(minimum cycle mean)) and the offsets are the ones they give at z. Where
// they do not converge, Karp's walks decide.

/// A cycle mean num / den, in lowest terms (den > 0).
struct Mean {
  Wide num = 0, den = 1;
};
bool operator<(const Mean& a, const Mean& b) { return a.num * b.den < b.num * a.den; }
bool operator==(const Mean& a, const Mean& b) { return a.num == b.num && a.den == b.den; }

Mean lowest_terms(Wide num, Wide den) {
  Wide a = num < 0 ? -num : num, b = den;
  while (b != 0) a %= b, std::swap(a, b);
  return {num / a, den / a};  // a >= 1: den >= 1
}

/// Howard's policy iteration for the minimum cycle mean of the complete graph of w: each
/// member follows one out-edge (its policy); the policy graph's cycles give every member
/// a mean (eta) and a bias (x, kept as eta.den x bias: integers), and each pass moves a
/// member to an edge of a lower mean, else of a lower bias, until none does.
class PolicyIteration {
 public:
  explicit PolicyIteration(const Weights& w)
      : w_(w), n_(w.n), policy_(w.n), eta_(w.n), x_(w.n), state_(w.n) {
    for (std::size_t u = 0; u < n_; ++u) {
      std::size_t best = u == 0 ? 1 : 0;
      for (std::size_t i = 0; i < n_; ++i)
        if (i != u && weight(u, i) < weight(u, best)) best = i;
      policy_[u] = best;
    }
  }
  /// The least mean of the policy graphs' cycles met (n >= 2).
  Mean least_cycle_mean(int passes) {
    for (int pass = 0; pass < passes; ++pass) {
      evaluate();
      if (!improve_means() && !improve_biases()) break;
    }
    return best_;
  }

 private:
  Wide weight(std::size_t u, std::size_t i) const { return w_.row(u)[i]; }
  /// eta.den x (w(u, i) - eta) + x(i): u's scaled bias through i.
  Wide through(std::size_t u, std::size_t i) const {
    return eta_[i].den * weight(u, i) - eta_[i].num + x_[i];
  }
  void evaluate() {
    std::fill(state_.begin(), state_.end(), kUnseen);
    for (std::size_t s = 0; s < n_; ++s) {
      path_.clear();
      std::size_t v = s;
      for (; state_[v] == kUnseen; v = policy_[v]) state_[v] = kOnPath, path_.push_back(v);
      if (state_[v] == kOnPath) close_cycle(v);
      for (auto it = path_.rbegin(); it != path_.rend(); ++it) settle(*it);
    }
  }
  /// The cycle through v at the end of the path: its mean, x(v) = 0, the path cut before v.
  void close_cycle(std::size_t v) {
    const auto start =
        static_cast<std::size_t>(std::find(path_.begin(), path_.end(), v) - path_.begin());
    Wide sum = 0;
    for (std::size_t t = start; t < path_.size(); ++t) sum += weight(path_[t], policy_[path_[t]]);
    const Mean mean = lowest_terms(sum, static_cast<Wide>(path_.size() - start));
    if (!met_ || mean < best_) best_ = mean, met_ = true;
    eta_[v] = mean, x_[v] = 0, state_[v] = kDone;
    for (std::size_t t = path_.size() - 1; t > start; --t) settle(path_[t]);
    path_.resize(start);
  }
  void settle(std::size_t u) {
    const std::size_t next = policy_[u];
    eta_[u] = eta_[next], x_[u] = through(u, next), state_[u] = kDone;
  }
  bool improve_means() {
    bool changed = false;
    for (std::size_t u = 0; u < n_; ++u) {
      std::size_t best = policy_[u];
      for (std::size_t i = 0; i < n_; ++i)
        if (i != u && eta_[i] < eta_[best]) best = i;
      if (best != policy_[u]) policy_[u] = best, changed = true;
    }
    return changed;
  }
  bool improve_biases() {
    bool changed = false;
    for (std::size_t u = 0; u < n_; ++u) {
      std::size_t best = policy_[u];
      Wide least = x_[u];
      for (std::size_t i = 0; i < n_; ++i) {
        if (i == u || !(eta_[i] == eta_[u])) continue;
        const Wide x = through(u, i);
        if (x < least) least = x, best = i;
      }
      if (best != policy_[u]) policy_[u] = best, changed = true;
    }
    return changed;
  }

  enum State : std::uint8_t { kUnseen, kOnPath, kDone };
  const Weights& w_;
  std::size_t n_;
  std::vector<std::size_t> policy_;
  std::vector<Mean> eta_;
  std::vector<Wide> x_;
  std::vector<State> state_;
  std::vector<std::size_t> path_;
  Mean best_;
  bool met_ = false;
};

/// Passes of policy iteration before Karp's walks decide (a few tens in practice).
constexpr int kPolicyPasses = 100;

// --- Separable latencies ---------------------------------------------------------------
//
// Where a_ij = up_i + down_j for every i != j (n >= 3), as when every member reaches one
// switch over its own link and leaves it over another, w[k][i] = min_j (a_kj - a_ij) =
// up_k - up_i: every cycle weighs 0, so z = 0, and the least offsets are o_i = max up -
// up_i (y_k = up_k - max up is the greatest y <= 0 with y_k - y_i <= up_k - up_i). The
// same integers as the minimum cycle mean's, in O(n^2).

/// up_i and down_j with a_ij = up_i + down_j off the diagonal (up_0 = 0), if they exist.
std::optional<std::vector<Wide>> separable_up(const ArrivalMatrix& arrival_ps) {
  const std::size_t n = arrival_ps.size();
  if (n < 3) return std::nullopt;
  const auto a = [&](std::size_t i, std::size_t j) { return static_cast<Wide>(arrival_ps[i][j]); };
  std::vector<Wide> up(n, 0), down(n, 0);
  for (std::size_t j = 1; j < n; ++j) down[j] = a(0, j);
  for (std::size_t i = 1; i < n; ++i) {
    const std::size_t j = i == 1 ? 2 : 1;  // a column other than 0 and i
    up[i] = a(i, j) - down[j];
  }
  down[0] = a(1, 0) - up[1];
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j)
      if (i != j && up[i] + down[j] != a(i, j)) return std::nullopt;
  return up;
}

std::optional<Offsets> separable_offsets(const ArrivalMatrix& arrival_ps) {
  const auto up = separable_up(arrival_ps);
  if (!up) return std::nullopt;
  const Wide highest = *std::max_element(up->begin(), up->end());
  Offsets offsets;
  for (const Wide u : *up) offsets.push_back(static_cast<std::uint64_t>(highest - u));
  return offsets;
}

/// `fast`: separable latencies in O(n^2), else the weights eight rows per pass and policy
/// iteration before Karp's walks; the same offsets as Karp's alone.
Offsets solve_by_cycle_mean(const ArrivalMatrix& arrival_ps, bool fast) {
  require_representable(arrival_ps);
  if (fast)
    if (auto offsets = separable_offsets(arrival_ps)) return std::move(*offsets);
  const Weights w = skew_weights(arrival_ps, fast);
  // |z| <= the largest weight + 1, and a distance sums up to n terms of w + z.
  const std::uint64_t largest = largest_weight(w);
  const bool narrow = fits_in_64_bits(2 * largest + 1, w.n + 1);
  if (fast) {
    const Mean mean = PolicyIteration(w).least_cycle_mean(kPolicyPasses);
    const std::int64_t z = whole_skew(mean.num, mean.den);  // |z| <= largest + 1, as Karp's
    auto offsets = narrow ? try_least_offsets<std::int64_t>(w, z) : try_least_offsets<Wide>(w, z);
    if (offsets) return std::move(*offsets);
  }
  const std::int64_t z = least_whole_skew(w, narrow);
  return narrow ? least_offsets<std::int64_t>(w, z) : least_offsets<Wide>(w, z);
}

// --- LP -------------------------------------------------------------------------------

/// The LP works in µs, or a coarser unit keeping every value below 1e6 units. GLPK's
/// tolerances are absolute (primal feasibility 1e-7), so the unit has to keep both the
/// round-off of the data and the tolerance small: in µs latencies up to ~1e12 ps (1 s)
/// become ~1e6 (round-off ~1e-10 µs) and the tolerance is 0.1 ps. (In ns, values ~1e8
/// have round-off near 1e-7 and phase 1 can wrongly report the LP infeasible; delays of
/// minutes in µs do the same, hence the coarser unit there, where 0.1 ppb of the largest
/// latency is the precision.) Latencies are shifted by their minimum first: offsets do
/// not change, and the values stay as small as the spread allows.
double ps_per_unit(std::uint64_t spread_ps) {
  return std::max(1e6, static_cast<double>(spread_ps) / 1e6);
}
/// Added to a stage's optimum when it becomes a bound of the next stage (1e-3 ps at
/// µs). The next stage starts from the previous optimal basis, which this bound keeps
/// feasible.
constexpr double kStageSlackUnits = 1e-9;
/// Simplex limit: a small LP takes milliseconds; never let a degenerate one spin. A count
/// of iterations, not wall time, so that whether an LP is solved never depends on load.
constexpr int kIterationLimit = 200'000;

struct GlpDeleter {
  void operator()(glp_prob* lp) const { glp_delete_prob(lp); }
};

/// Columns: offsets o_i >= 0, per receiver j the first and last arrivals lo_j, hi_j,
/// the largest residual z and the last arrival t. Rows, for every receiver j and sender
/// i != j: lo_j <= o_i + a_ij <= hi_j; per receiver: hi_j - lo_j <= z and hi_j <= t.
/// For fixed offsets the smallest feasible z is max_j (max_i - min_i of o_i + a_ij), so
/// this is the pairwise formulation (o_i + a_ij - o_k - a_kj <= z for all j, i, k) with
/// O(n^2) rows instead of O(n^3).
class SkewLp {
 public:
  explicit SkewLp(const ArrivalMatrix& arrival_ps);
  int offset(std::size_t i) const { return static_cast<int>(i) + 1; }
  int lo(std::size_t j) const { return static_cast<int>(n_ + j) + 1; }
  int hi(std::size_t j) const { return static_cast<int>(2 * n_ + j) + 1; }
  int z() const { return static_cast<int>(3 * n_) + 1; }
  int t() const { return static_cast<int>(3 * n_) + 2; }
  /// Minimises the sum of the given columns; returns the optimum.
  double minimise(const std::vector<int>& columns);
  /// Caps a column at `value` plus the stage slack.
  void cap(int column, double value);
  Offsets offsets_ps() const;

 private:
  void add_row(const std::vector<std::pair<int, double>>& terms, double upper);
  bool solved(int rc) const { return rc == 0 && glp_get_status(lp_.get()) == GLP_OPT; }
  std::size_t n_;
  double ps_per_unit_ = 1e6;
  std::unique_ptr<glp_prob, GlpDeleter> lp_;
};

SkewLp::SkewLp(const ArrivalMatrix& arrival_ps) : n_(arrival_ps.size()), lp_(glp_create_prob()) {
  std::uint64_t lowest = std::numeric_limits<std::uint64_t>::max(), highest = 0;
  for (std::size_t i = 0; i < n_; ++i)
    for (std::size_t j = 0; j < n_; ++j)
      if (i != j)
        lowest = std::min(lowest, arrival_ps[i][j]), highest = std::max(highest, arrival_ps[i][j]);
  ps_per_unit_ = ps_per_unit(highest - lowest);
  glp_set_obj_dir(lp_.get(), GLP_MIN);
  glp_add_cols(lp_.get(), t());
  for (int col = 1; col <= t(); ++col) glp_set_col_bnds(lp_.get(), col, GLP_LO, 0.0, 0.0);
  for (std::size_t j = 0; j < n_; ++j) {
    for (std::size_t i = 0; i < n_; ++i) {
      if (i == j) continue;
      const double a = static_cast<double>(arrival_ps[i][j] - lowest) / ps_per_unit_;
      add_row({{offset(i), 1.0}, {hi(j), -1.0}}, -a);
      add_row({{lo(j), 1.0}, {offset(i), -1.0}}, a);
    }
    add_row({{hi(j), 1.0}, {lo(j), -1.0}, {z(), -1.0}}, 0.0);
    add_row({{hi(j), 1.0}, {t(), -1.0}}, 0.0);
  }
}

void SkewLp::add_row(const std::vector<std::pair<int, double>>& terms, double upper) {
  const int row = glp_add_rows(lp_.get(), 1);
  std::vector<int> index{0};
  std::vector<double> value{0.0};
  for (const auto& [col, coef] : terms) {
    index.push_back(col);
    value.push_back(coef);
  }
  glp_set_mat_row(lp_.get(), row, static_cast<int>(terms.size()), index.data(), value.data());
  glp_set_row_bnds(lp_.get(), row, GLP_UP, 0.0, upper);
}

double SkewLp::minimise(const std::vector<int>& columns) {
  for (int col = 1; col <= t(); ++col) glp_set_obj_coef(lp_.get(), col, 0.0);
  for (int col : columns) glp_set_obj_coef(lp_.get(), col, 1.0);
  glp_smcp parm;
  glp_init_smcp(&parm);
  parm.msg_lev = GLP_MSG_OFF;
  parm.it_lim = kIterationLimit;
  int rc = glp_simplex(lp_.get(), &parm);
  if (!solved(rc)) {
    // Round-off can mislead the floating-point simplex; GLPK's rational one cannot.
    glp_std_basis(lp_.get());
    rc = glp_exact(lp_.get(), &parm);
  }
  if (!solved(rc)) {
    throw std::runtime_error("send alignment: GLPK found no optimum (code " + std::to_string(rc) +
                             ", status " + std::to_string(glp_get_status(lp_.get())) + ")");
  }
  return glp_get_obj_val(lp_.get());
}

void SkewLp::cap(int column, double value) {
  glp_set_col_bnds(lp_.get(), column, GLP_DB, 0.0, std::max(value, 0.0) + kStageSlackUnits);
}

Offsets SkewLp::offsets_ps() const {
  Offsets offsets;
  for (std::size_t i = 0; i < n_; ++i) {
    const double ps = glp_get_col_prim(lp_.get(), offset(i)) * ps_per_unit_;
    offsets.push_back(static_cast<std::uint64_t>(std::llround(std::max(ps, 0.0))));
  }
  return offsets;
}

/// Lexicographic: the largest residual z, then the last arrival t, then (to pick one of
/// the remaining optima deterministically) the sum of the offsets. Each optimum becomes a
/// bound of the next stage; a weighted single objective would trade t for offsets.
Offsets solve_lp(const ArrivalMatrix& arrival_ps) {
  SkewLp lp(arrival_ps);
  lp.cap(lp.z(), lp.minimise({lp.z()}));
  lp.cap(lp.t(), lp.minimise({lp.t()}));
  std::vector<int> offsets;
  for (std::size_t i = 0; i < arrival_ps.size(); ++i) offsets.push_back(lp.offset(i));
  lp.minimise(offsets);
  return lp.offsets_ps();
}

}  // namespace

std::uint64_t residual_skew_ps(const ArrivalMatrix& arrival_ps,
                               const std::vector<std::uint64_t>& offset_ps, std::size_t j) {
  if (offset_ps.size() != arrival_ps.size() || j >= arrival_ps.size()) {
    throw std::invalid_argument("send alignment: offsets or receiver do not fit the matrix");
  }
  bool any = false;
  std::uint64_t first = 0, last = 0;
  for (std::size_t i = 0; i < arrival_ps.size(); ++i) {
    if (i == j) continue;
    const std::uint64_t at = offset_ps[i] + arrival_ps[i][j];
    first = any ? std::min(first, at) : at;
    last = any ? std::max(last, at) : at;
    any = true;
  }
  return last - first;
}

SenderAlignment unaligned(const ArrivalMatrix& arrival_ps) {
  require_square(arrival_ps);
  return finish(arrival_ps, Offsets(arrival_ps.size(), 0), "none");
}

std::optional<SenderAlignment> align_senders_closed_form(const ArrivalMatrix& arrival_ps) {
  require_square(arrival_ps);
  if (arrival_ps.size() <= 2) {  // each receiver hears at most one sender
    return finish(arrival_ps, Offsets(arrival_ps.size(), 0), "closed-form");
  }
  if (arrival_ps.size() == 3) {
    if (auto offsets = triad_closed_form(arrival_ps)) {
      return finish(arrival_ps, std::move(*offsets), "closed-form");
    }
  }
  return std::nullopt;
}

SenderAlignment align_senders(const ArrivalMatrix& arrival_ps) {
  if (auto closed = align_senders_closed_form(arrival_ps)) return std::move(*closed);
  return finish(arrival_ps, solve_by_cycle_mean(arrival_ps, true), "cycle-mean");
}

SenderAlignment align_senders_general(const ArrivalMatrix& arrival_ps) {
  if (auto closed = align_senders_closed_form(arrival_ps)) return std::move(*closed);
  return finish(arrival_ps, solve_by_cycle_mean(arrival_ps, false), "cycle-mean");
}

SenderAlignment align_senders_lp(const ArrivalMatrix& arrival_ps) {
  require_square(arrival_ps);
  if (arrival_ps.size() <= 1) return finish(arrival_ps, Offsets(arrival_ps.size(), 0), "lp");
  return finish(arrival_ps, solve_lp(arrival_ps), "lp");
}

std::vector<std::vector<std::uint64_t>> align_copies(const ArrivalMatrix& arrival_ps) {
  require_square(arrival_ps);
  const std::size_t n = arrival_ps.size();
  std::vector<std::vector<std::uint64_t>> copy_offset_ps(n, std::vector<std::uint64_t>(n, 0));
  for (std::size_t j = 0; j < n; ++j) {
    std::uint64_t latest = 0;
    for (std::size_t k = 0; k < n; ++k) {
      if (k != j) latest = std::max(latest, arrival_ps[k][j]);
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (i != j) copy_offset_ps[i][j] = latest - arrival_ps[i][j];
    }
  }
  return copy_offset_ps;
}

}  // namespace aggnet
