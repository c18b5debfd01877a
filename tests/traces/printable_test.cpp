// printable(): what an error message may quote of untrusted bytes — control bytes and bytes that
// are not UTF-8 escaped, UTF-8 text kept, the length bounded, and a second pass escaping nothing.
#include "traces/printable.h"

#include <gtest/gtest.h>

#include <string>

namespace meshscope::traces {
namespace {

TEST(Printable, EscapesControlBytesAndKeepsText) {
  EXPECT_EQ(printable("a\x1b[2Jb"), "a\\x1b[2Jb");
  EXPECT_EQ(printable(std::string("n\0l", 3)), "n\\x00l");
  EXPECT_EQ(printable("tab\there"), "tab\\x09here");
  EXPECT_EQ(printable("plain, text"), "plain, text");
}

TEST(Printable, KeepsUtf8AndEscapesBytesThatAreNot) {
  EXPECT_EQ(printable("caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x99\x82"),
            "caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x99\x82");  // é → 🙂
  // A PNG's signature: 0x89 leads no UTF-8 sequence.
  EXPECT_EQ(printable("\x89PNG\r\n"), "\\x89PNG\\x0d\\x0a");
  EXPECT_EQ(printable("\xc3("), "\\xc3(");                  // a lead byte without its follower
  EXPECT_EQ(printable("\xc0\xaf"), "\\xc0\\xaf");           // overlong '/'
  EXPECT_EQ(printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a UTF-16 surrogate
  EXPECT_EQ(printable("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // above U+10FFFF
  EXPECT_EQ(printable("\xe2\x86"), "\\xe2\\x86");                    // cut short
  EXPECT_EQ(printable("x\xc2\x9b"
                      "31mRED"),
            "x\\xc2\\x9b"
            "31mRED");                           // C1 CSI, encoded
  EXPECT_EQ(printable("\xc2\xa0"), "\xc2\xa0");  // U+00A0 is text
}

TEST(Printable, BoundsTheLengthOnACharacterBoundaryAndIsIdempotent) {
  const std::string long_text(1000, 'x');
  EXPECT_EQ(printable(long_text, 10), "xxxxxxxxxx... (1000 bytes)");
  // The cut backs up over a two-byte é rather than split it, and no further: stray continuation
  // bytes are no character.
  EXPECT_EQ(printable("xxxxx" + std::string(300, '\x80'), 8),
            "xxxxx\\x80\\x80\\x80... (305 bytes)");
  EXPECT_EQ(printable("abc\xc3\xa9z", 4), "abc... (6 bytes)");
  for (const std::string s : {"\x89PNG\r\n", "caf\xc3\xa9\x1b", "\xff\xfe\x00"}) {
    const std::string once = printable(s);
    EXPECT_EQ(printable(once, once.size()), once);  // printable text: nothing more to escape
  }
}

}  // namespace
}  // namespace meshscope::traces
