// The CSV writer (RFC 4180 quoting) and split() of common/.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/csv.h"
#include "common/strings.h"

namespace aggnet {
namespace {

using Fields = std::vector<std::string>;

TEST(Csv, PlainFieldsAreWrittenAsIs) {
  EXPECT_EQ(csv_field("nyc"), "nyc");
  EXPECT_EQ(csv_field(""), "");
  EXPECT_EQ(csv_field("a b;c'd"), "a b;c'd");
  EXPECT_EQ(csv_field("1.5e-05"), "1.5e-05");
}

TEST(Csv, CommasQuotesAndLineBreaksAreQuoted) {
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("\""), "\"\"\"\"");
  EXPECT_EQ(csv_field("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(csv_field("cr\r"), "\"cr\r\"");
  EXPECT_EQ(csv_field(",\"\n"), "\",\"\"\n\"");
}

TEST(Csv, WriterJoinsFieldsAndEndsRecordsWithLf) {
  CsvWriter w;
  w.row({"site", "group", "note"});
  w.field("nyc").field("nyc chi,lax").field("a \"b\"").end_row();
  w.field(std::string()).field("").field("x").end_row();
  EXPECT_EQ(w.str(),
            "site,group,note\n"
            "nyc,\"nyc chi,lax\",\"a \"\"b\"\"\"\n"
            ",,x\n");
}

TEST(Csv, NumbersAreWrittenAsFmtWritesThem) {
  CsvWriter w;
  w.field(0.1).field(1e-5).field(std::uint64_t{1} << 40).field(-3).field(2.0).end_row();
  EXPECT_EQ(w.str(), "0.1,1e-05,1099511627776,-3,2\n");
}

TEST(Split, KeepsEmptyFieldsByDefault) {
  EXPECT_EQ(split("a.b.c", '.'), (Fields{"a", "b", "c"}));
  EXPECT_EQ(split("a,,b", ','), (Fields{"a", "", "b"}));
  EXPECT_EQ(split("a,", ','), (Fields{"a", ""}));
  EXPECT_EQ(split(",a", ','), (Fields{"", "a"}));
  EXPECT_EQ(split("", ','), (Fields{""}));
  EXPECT_EQ(split(",", ','), (Fields{"", ""}));
  EXPECT_EQ(split("no separator", ','), (Fields{"no separator"}));
  EXPECT_EQ(split(" a , b ", ','), (Fields{" a ", " b "}));  // no trimming
}

TEST(Split, JoiningTheFieldsGivesTheTextBack) {
  for (const std::string text : {"", ",", "a", "a,b", ",,x,,", "nyc-lon"}) {
    std::string joined;
    const auto fields = split(text, ',');
    for (std::size_t i = 0; i < fields.size(); ++i) joined += (i ? "," : "") + fields[i];
    EXPECT_EQ(joined, text);
  }
}

TEST(Split, SkipDropsEmptyFields) {
  EXPECT_EQ(split(",a,,b,", ',', EmptyFields::kSkip), (Fields{"a", "b"}));
  EXPECT_EQ(split("lon,tyo", ',', EmptyFields::kSkip), (Fields{"lon", "tyo"}));
  EXPECT_EQ(split("", ',', EmptyFields::kSkip), Fields{});
  EXPECT_EQ(split(",,", ',', EmptyFields::kSkip), Fields{});
}

}  // namespace
}  // namespace aggnet
