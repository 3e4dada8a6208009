package io.neardup.text;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * Edge cases where Java's own Unicode handling would differ from Python's; every expected value is what
 * Python 3.11 answers ({@code normalize}, {@code content_chars}, {@code is_punctuation} of
 * {@code ingest/normalize.py}). The exhaustive comparison lives in {@code tests/plugin/test_normalize_parity.py}.
 */
final class NormalizeTest {
    @Test
    void foldsWidthCaseAndWhitespace() {
        assertEquals("abc123 新闻 报道", Normalize.normalize("ＡＢＣ１２３　新闻\n\n报道"));
        assertEquals("xii株式会社(株)", Normalize.normalize("Ⅻ㍿㈱"));
        assertEquals("fi", Normalize.normalize("\uFB01"));
    }

    @Test
    void usesUnicode14NotTheJdkTables() {
        // U+10781 (new in Unicode 14) has a compatibility decomposition; JDK 17's Normalizer leaves it alone
        assertEquals("\u02D0", Normalize.normalize("\uD801\uDF81"));
    }

    @Test
    void reordersAndComposesCanonically() {
        assertEquals("\u1EA1\u0307", Normalize.normalize("a\u0307\u0323"));
        assertEquals("\u1E69", Normalize.normalize("\u1E9B\u0323"));
    }

    @Test
    void lowercasesWithFullMappingAndFinalSigma() {
        assertEquals("i\u0307", Normalize.normalize("\u0130"));
        assertEquals("οδος οδοσα σα", Normalize.normalize("ΟΔΟΣ ΟΔΟΣΑ ΣΑ"));
        // ypogegrammeni and soft hyphen are case-ignorable: the sigma before them is still final
        assertEquals("ας\u0345 ας\u00AD.", Normalize.normalize("ΑΣ\u0345 ΑΣ\u00AD."));
    }

    @Test
    void whitespaceIsPythonsIsspace() {
        assertEquals("a b", Normalize.normalize("\u001C a \u0085 b\u3000"));
        assertEquals("x", Normalize.normalize("\u2028x\u2029"));
        // not whitespace in Python: the Mongolian vowel separator and the zero-width space
        assertEquals("\u180E", Normalize.normalize("\u180E"));
        assertEquals("\u200B", Normalize.normalize("\u200B"));
    }

    @Test
    void readsCodePointsAndKeepsLoneSurrogates() {
        assertEquals("\uD840\uDC00a", Normalize.normalize("\uD840\uDC00\uFF21"));
        assertEquals("\uD800", Normalize.normalize("\uD800"));
    }

    @Test
    void contentCharsKeepLettersAndAllNumerics() {
        assertEquals("人民日报记者报道", Normalize.contentChars("《人民日报》, 记者 报道!"));
        assertEquals("ab\u2460\u00B2\u00BD", Normalize.contentChars("a_b \u2460\u00B2\u00BD"));
        assertEquals("一二三〇", Normalize.contentChars("一二三〇"));
        assertEquals("\uD840\uDC00x", Normalize.contentChars("\uD840\uDC00x"));
    }

    @Test
    void punctuationIsCategoriesPSZC() {
        assertTrue(Normalize.isPunctuation(""));
        assertTrue(Normalize.isPunctuation("，。"));
        assertTrue(Normalize.isPunctuation("_"));
        assertTrue(Normalize.isPunctuation(" \u3000"));
        assertTrue(Normalize.isPunctuation("\uD83D\uDE00"));
        assertTrue(Normalize.isPunctuation("\uDB40\uDC01"));
        assertTrue(Normalize.isPunctuation("\uDBFF\uDFFF"));
        assertFalse(Normalize.isPunctuation("新闻"));
        assertFalse(Normalize.isPunctuation("\u0301"));
        assertFalse(Normalize.isPunctuation("a"));
    }
}
