package io.neardup.text;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Cases pinned from the Python side ({@code PreciseCut.lcut}, {@code hmm_cut}, {@code Segmenter.tag}); the
 * full comparison is {@code tests/plugin/test_cut_parity.py}.
 */
final class PreciseCutTest {
    private static final PreciseCut CUT = PreciseCut.shared();
    private static final Hmm HMM = Hmm.shared();
    private static final Tags TAGS = Tags.shared();

    @Test
    void tiedRoutesGiveTheLongerFirstWord() {
        assertEquals(List.of("苦苦", "苦"), CUT.lcut("苦苦苦"));
    }

    @Test
    void unknownWordsComeFromTheHmm() {
        assertEquals(List.of("他", "来到", "了", "网易", "杭研", "大厦"), CUT.lcut("他来到了网易杭研大厦"));
        assertEquals(
            List.of("北京大学", "的", "学生", "，", "今天", "发表", "了", "2", "篇", "论文", " ", "neardup", " ", "v1.0", "！"),
            CUT.lcut("北京大学的学生，今天发表了2篇论文 neardup v1.0！"));
    }

    @Test
    void crLfStaysTogetherAndCharactersBeyondTheBmpStayWhole() {
        assertEquals(List.of("a", "\r\n", "b", "\r", "\r\n", " ", "😀", "中文", "𠀀"), CUT.lcut("a\r\nb\r\r\n 😀中文𠀀"));
        assertEquals(List.of(), CUT.lcut(""));
    }

    @Test
    void hmmStatesTieAsInJieba() {
        // characters missing from some states' emission tables make states tie
        assertEquals(List.of("凁", "僷", "遆囱"), HMM.cut("凁僷遆囱"));
        assertEquals(List.of("惗", "傋", "柊", "乑", "鞮"), HMM.cut("惗傋柊乑鞮"));
        assertEquals(List.of("敔", "剓倳佌恹", "冸", "偋"), HMM.cut("敔剓倳佌恹冸偋"));
    }

    @Test
    void hmmKeepsLatinNumbersTogetherWithUnicodeDecimals() {
        assertEquals(List.of("韩冰", "说", "a1b2.5%", "测试"), HMM.cut("韩冰说a1b2.5%测试"));
        assertEquals(List.of("x1.٣٣%", "y.1"), HMM.cut("x1.٣٣%y.1"));
    }

    @Test
    void tagsComeFromTheDictionaryOrTheShape() {
        assertEquals("nt", TAGS.tag("北京大学"));
        assertEquals("a", TAGS.tag("苦苦"));
        assertEquals("eng", TAGS.tag("neardup"));
        assertEquals("m", TAGS.tag("3.5%"));
        assertEquals("m", TAGS.tag("1\n")); // Python's $ matches before a final newline
        assertEquals("nz", TAGS.tag("1\n\n"));
        assertEquals("nz", TAGS.tag("A1"));
        assertEquals("x", TAGS.tag("𠀀")); // one code point, two UTF-16 units
        assertEquals("x", TAGS.tag(""));
    }
}
