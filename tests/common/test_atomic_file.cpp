// Output files (common/atomic_file.h): regular files replaced whole through a rename;
// devices, FIFOs and links to them written through, never replaced (as root, renaming
// over /dev/null once replaced the system's /dev/null). The commands refuse all but
// regular files and the standard output before they run (apps/cli_options.h); the
// library stays safe for any path it is given.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

#include "common/atomic_file.h"

namespace aggnet {
namespace {

namespace fs = std::filesystem;

class AtomicFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("aggnet-atomic-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  static std::string read(const fs::path& p) {
    std::ifstream in(p);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }
  fs::path dir_;
};

TEST_F(AtomicFile, RegularFileIsReplacedWholeAndNoTemporaryRemains) {
  const fs::path out = dir_ / "out.json";
  write_file_atomically(out.string(), "first\n");
  write_file_atomically(out.string(), "second\n");
  EXPECT_EQ(read(out), "second\n");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

TEST_F(AtomicFile, LinkToCharacterDeviceIsWrittenThroughAndStaysALink) {
  const fs::path link = dir_ / "null-link";
  fs::create_symlink("/dev/null", link);
  struct stat before {};
  ASSERT_EQ(::stat("/dev/null", &before), 0);
  ASSERT_TRUE(S_ISCHR(before.st_mode));
  EXPECT_TRUE(is_special_file(link.string()));
  write_file_atomically(link.string(), "{\"x\": 1}\n");
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(link)));
  struct stat after {};
  ASSERT_EQ(::stat("/dev/null", &after), 0);
  EXPECT_TRUE(S_ISCHR(after.st_mode));
  EXPECT_EQ(after.st_ino, before.st_ino);  // the same device node, not a new file
  EXPECT_FALSE(fs::exists("/dev/null.tmp." + std::to_string(::getpid())));
}

TEST_F(AtomicFile, FifoIsWrittenThroughNotReplaced) {
  const fs::path fifo = dir_ / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string received;
  std::thread reader([&] { received = read(fifo); });
  write_file_atomically(fifo.string(), "through the pipe\n");
  reader.join();
  EXPECT_EQ(received, "through the pipe\n");
  EXPECT_TRUE(fs::is_fifo(fifo));
}

TEST_F(AtomicFile, CommitIntoFifoCopiesAndRemovesTheTemporary) {
  const fs::path fifo = dir_ / "pipe";
  const fs::path tmp = dir_ / "wave.partial.vcd";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::ofstream(tmp) << "$date today $end\n";
  std::string received;
  std::thread reader([&] { received = read(fifo); });
  commit_file(tmp.string(), fifo.string());
  reader.join();
  EXPECT_EQ(received, "$date today $end\n");
  EXPECT_FALSE(fs::exists(tmp));
  EXPECT_TRUE(fs::is_fifo(fifo));
}

TEST_F(AtomicFile, LinkToRegularFileReplacesTheTargetAndKeepsTheLink) {
  const fs::path target = dir_ / "target.json";
  const fs::path link = dir_ / "link.json";
  std::ofstream(target) << "old\n";
  fs::create_symlink(target, link);
  write_file_atomically(link.string(), "new\n");
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(link)));
  EXPECT_EQ(read(target), "new\n");
}

// A batch writes its special files (the standard output, a device) first: one that fails
// leaves no regular output of the batch, nor a temporary.
TEST_F(AtomicFile, ABatchWhoseDeviceFailsCommitsNone) {
  {
    OutputBatch batch;
    batch.add((dir_ / "r.json").string(), "{}\n");
    batch.add("/dev/full", "no room\n");
    EXPECT_THROW(batch.commit(), std::runtime_error);
  }
  EXPECT_TRUE(fs::is_empty(dir_));
}

// A temporary's name was the output's with ".tmp.PID" (".tmp.PID.N" in a batch): a link
// planted there was written through, then renamed over the output, which became that link.
TEST_F(AtomicFile, ALinkPlantedAtATemporarysNameIsNeverWrittenThrough) {
  const fs::path victim = dir_ / "victim.txt", out = dir_ / "out.json";
  std::ofstream(victim) << "keep\n";
  const std::string pid = std::to_string(::getpid());
  for (const auto& name : {"out.json.tmp." + pid, "out.json.tmp." + pid + ".0"})
    fs::create_symlink(victim, dir_ / name);
  write_file_atomically(out.string(), "whole\n");
  {
    OutputBatch batch;
    batch.add(out.string(), "batch\n");
    batch.commit();
  }
  EXPECT_EQ(read(victim), "keep\n");
  EXPECT_FALSE(fs::is_symlink(fs::symlink_status(out)));
  EXPECT_EQ(read(out), "batch\n");
}

TEST_F(AtomicFile, TemporariesAreNewFilesOfTheirOwnWithTheUsualMode) {
  const std::string prefix = (dir_ / "w.vcd.").string();
  const std::string a = create_temporary(prefix, ".partial.vcd");
  const std::string b = create_temporary(prefix, ".partial.vcd");
  EXPECT_NE(a, b);
  for (const auto& name : {a, b}) {
    EXPECT_EQ(name.rfind(prefix, 0), 0u) << name;
    EXPECT_EQ(fs::path(name).extension(), ".vcd");
    EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(name)));
    EXPECT_EQ(fs::file_size(name), 0u);
  }
  const mode_t mask = ::umask(0);
  ::umask(mask);
  struct stat st {};
  ASSERT_EQ(::stat(a.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0666 & ~mask);  // as a file the command writes directly
}

TEST_F(AtomicFile, DirectoryIsAnError) {
  EXPECT_THROW(write_file_atomically(dir_.string(), "x"), std::runtime_error);
  EXPECT_TRUE(fs::is_directory(dir_));
}

}  // namespace
}  // namespace aggnet
