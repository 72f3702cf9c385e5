#include "common/csv.h"

namespace aggnet {

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string quoted = "\"";
  for (char c : text) {
    quoted += c;
    if (c == '"') quoted += '"';
  }
  return quoted + "\"";
}

CsvWriter& CsvWriter::field(std::string_view text) {
  if (in_row_) out_ += ',';
  out_ += csv_field(text);
  in_row_ = true;
  return *this;
}

CsvWriter& CsvWriter::end_row() {
  out_ += '\n';
  in_row_ = false;
  return *this;
}

CsvWriter& CsvWriter::row(const std::vector<std::string>& fields) {
  for (const auto& f : fields) field(f);
  return end_row();
}

}  // namespace aggnet
