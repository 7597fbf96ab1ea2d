// Key files (issue 30): read only when the owner alone has access; refused
// otherwise with a message naming the file, its mode and `chmod 600 FILE`.
#include "venue/key_file.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace nv = nanotick::venue;
namespace fs = std::filesystem;

namespace {

class KeyFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("nanotick-key-file-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text, mode_t mode) const {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    EXPECT_EQ(::chmod(path.c_str(), mode), 0);
    return path;
  }
  static std::string error_of(const std::string& path) {
    try {
      (void)nv::read_key_file(path);
    } catch (const nv::KeyFileError& e) {
      return e.what();
    }
    return "";
  }
  fs::path dir_;
};

TEST_F(KeyFileTest, ShouldReadTheFirstLineOfAnOwnerOnlyFile) {
  EXPECT_EQ(nv::read_key_file(write("a.key", "demo-key-0123456789ab \r\nsecond line\n", 0600)),
            "demo-key-0123456789ab");
  EXPECT_EQ(nv::read_key_file(write("b.key", "no-newline-key-0123", 0400)), "no-newline-key-0123");
  EXPECT_EQ(nv::read_private_file(write("c.txt", "1 k\n2 k\n", 0600)), "1 k\n2 k\n");
}

TEST_F(KeyFileTest, ShouldRefuseAFileOthersHaveAnyAccessTo) {
  for (const mode_t mode : {0644, 0640, 0604, 0660, 0606, 0610, 0601, 0700 | 0044}) {
    const std::string path = write("shared.key", "demo-key-0123456789ab\n", mode);
    const std::string e = error_of(path);
    char octal[8];
    std::snprintf(octal, sizeof octal, "%04o", static_cast<unsigned>(mode));
    EXPECT_NE(e.find(path + ": mode " + octal), std::string::npos) << e;
    EXPECT_NE(e.find("chmod 600 " + path), std::string::npos) << e;
  }
}

TEST_F(KeyFileTest, ShouldNameTheModeOfAConfigHoldingAKeyOnlyWhenOthersMayReadIt) {
  const std::string path = write("trader.toml", "[session]\napi_key = \"x\"\n", 0644);
  EXPECT_EQ(
      nv::shared_key_mode_problem(path, "its session.api_key"),
      path + ": mode 0644 lets other users read its session.api_key; make it the owner's alone: chmod 600 " + path);
  ASSERT_EQ(::chmod(path.c_str(), 0600), 0);
  EXPECT_EQ(nv::shared_key_mode_problem(path, "its session.api_key"), "");
}

TEST_F(KeyFileTest, ShouldNameAMissingFileOrADirectory) {
  const std::string missing = (dir_ / "missing.key").string();
  EXPECT_NE(error_of(missing).find(missing + ": cannot read the key file"), std::string::npos) << error_of(missing);
  fs::create_directories(dir_ / "d");
  ::chmod((dir_ / "d").c_str(), 0700);
  EXPECT_NE(error_of((dir_ / "d").string()).find("not a regular file"), std::string::npos);
}

}  // namespace
