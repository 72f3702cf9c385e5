// CSV output, one writer for every CSV file aggnet writes (sweep export, size-buffers
// --csv, run --stats *.csv).
//
// Quoting follows RFC 4180: a field that holds a comma, a double quote, a CR or a LF is
// enclosed in double quotes, each double quote inside doubled; every other field is
// written as is (numbers are never quoted). Records end with "\n" (LF, not RFC 4180's
// CRLF; Python's csv module, pandas, SQLite and spreadsheets read both).
#pragma once

#include <fmt/format.h>

#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace aggnet {

/// One field, quoted when RFC 4180 requires it: `a,b` -> `"a,b"`, `say "hi"` ->
/// `"say ""hi"""`, `x` -> `x`.
std::string csv_field(std::string_view text);

/// Builds a CSV document record by record.
class CsvWriter {
 public:
  /// Appends one field to the current record (quoted as csv_field does).
  CsvWriter& field(std::string_view text);
  /// A number as fmt's "{}" writes it (shortest round trip: 0.1, 1e-05, 42).
  template <typename T, std::enable_if_t<std::is_arithmetic_v<T> && !std::is_same_v<T, bool> &&
                                             !std::is_same_v<T, char>,
                                         int> = 0>
  CsvWriter& field(T number) {
    return field(std::string_view(fmt::format("{}", number)));
  }
  /// Ends the current record (a record with no field is an empty line).
  CsvWriter& end_row();
  /// Appends a whole record: the fields, then end_row().
  CsvWriter& row(const std::vector<std::string>& fields);

  /// The document so far.
  const std::string& str() const { return out_; }

 private:
  std::string out_;
  bool in_row_ = false;  ///< the current record has a field (the next one needs a comma)
};

}  // namespace aggnet
