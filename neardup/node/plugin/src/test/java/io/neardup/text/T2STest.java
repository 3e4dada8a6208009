package io.neardup.text;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/**
 * Cases pinned from Python's {@code opencc.OpenCC("t2s").convert} (OpenCC 1.4.2), one per rule of OpenCC's
 * conversion; the parity test ({@code tests/plugin/test_t2s_parity.py}) compares the rest.
 */
final class T2STest {
    private static final T2S FOLD = T2S.shared();

    private static void folds(String traditional, String simplified) {
        assertEquals(simplified, FOLD.convert(traditional), () -> "convert(" + traditional + ")");
    }

    @Test
    void sharedIsLoadedOnce() {
        assertSame(T2S.shared(), T2S.shared());
    }

    @Test
    void foldsCharacters() {
        folds("國務院總理主持會議", "国务院总理主持会议");
        folds("乾", "干");
        folds("鍾", "钟");
    }

    @Test
    void aPhraseConvertsDifferentlyFromItsCharacters() {
        folds("憑藉", "凭借"); // 藉 alone stays 藉
        folds("一目瞭然", "一目了然"); // 瞭 alone stays 瞭
        folds("乾元", "乾元"); // 乾 alone becomes 干
        folds("想像", "想像");
    }

    @Test
    void aMultiValueEntryOutputsItsFirstValue() {
        folds("乾紅", "干红"); // TSPhrases: 干红 乾红
        folds("鍾繇", "锺繇"); // TSPhrases: 锺繇 钟繇, while 鍾 alone is 钟
    }

    @Test
    void shortCircuitAsksTheDictionariesInConfigOrder() {
        // TSCharactersExt (second) maps 㑮 to 𫝈; TSCharacters (third) lists 㑮 𫝈, first value 㑮
        folds("㑮", "\uD86D\uDF48");
        // TSPhrases (first) has 乾元, so its longest match wins over TSCharacters' 乾 → 干
        folds("乾元乾", "乾元干");
    }

    @Test
    void compatibilityIdeographsAreNormalizedFirst() {
        folds("\uF900\uF901", "岂更"); // U+F900 → 豈 → 岂; U+F901 → 更
        folds("\uD87E\uDC00", "丽"); // U+2F800 → U+4E3D
    }

    @Test
    void aCompleteIdeographicDescriptionSequenceStaysUnconverted() {
        folds("⿰說話說話", "⿰說話说话");
        folds("⿰說", "⿰说"); // incomplete: only the operator is copied
        folds("⿰⿱說話", "⿰⿱說話"); // the outer one is incomplete, the inner one complete
    }

    @Test
    void everythingElsePassesThrough() {
        folds("", "");
        folds("ABC abc 123", "ABC abc 123");
        folds("a\u0000說", "a\u0000说");
        folds("說\u0301", "说\u0301");
    }

    @Test
    void refusesLoneSurrogatesLikePythonsUtf8Encoding() {
        assertThrows(IllegalArgumentException.class, () -> FOLD.convert("\uD800"));
        assertThrows(IllegalArgumentException.class, () -> FOLD.convert("說\uDFFF"));
        assertThrows(IllegalArgumentException.class, () -> FOLD.convert("a\uD83D"));
    }
}
