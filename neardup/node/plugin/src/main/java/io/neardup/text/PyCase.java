package io.neardup.text;

import com.ibm.icu.lang.UCharacter;
import com.ibm.icu.lang.UProperty;
import com.ibm.icu.util.ULocale;
import java.util.BitSet;

/**
 * Python's {@code str.lower()}, by code point, over ICU4J 70 (Unicode 14.0, Python 3.11's tables).
 *
 * <p>Python lowercases with the full, language-independent mapping (UnicodeData plus the unconditional entries
 * of SpecialCasing, so U+0130 becomes "i\u0307") and decides the one contextual case, capital sigma, by the
 * Final_Sigma rule over the Cased and Case_Ignorable properties. {@code String.toLowerCase} follows the JDK's
 * Unicode version and a locale, so it is never used here; the sigma rule is spelled out as CPython
 * ({@code handle_capital_sigma}) does, over the unlowered text, so both sides take the same decision.
 */
public final class PyCase {
    private PyCase() {}

    private static final int CAPITAL_SIGMA = 0x3A3;
    private static final char SMALL_SIGMA = '\u03C3';
    private static final char FINAL_SIGMA = '\u03C2';

    /**
     * The BMP code points whose simple lowercase mapping is another character, worked out once from ICU:
     * lowercasing asks it of every character, and almost none of a Chinese text has a case.
     */
    private static final BitSet BMP_CHANGES = new BitSet(0x10000);

    static {
        for (int cp = 0; cp < 0x10000; cp++) {
            if (UCharacter.toLowerCase(cp) != cp) {
                BMP_CHANGES.set(cp);
            }
        }
    }

    /** {@code text.lower()}; returns {@code text} itself when nothing changes. */
    public static String lower(String text) {
        int n = text.length();
        StringBuilder out = null;
        for (int i = 0; i < n; ) {
            int cp = text.codePointAt(i);
            int next = i + Character.charCount(cp);
            // every full lowercase mapping of Unicode 14 that differs from the character also has a simple
            // mapping, so an unchanged simple mapping means an unchanged character (the exhaustive parity test
            // checks this for every code point)
            if (cp < 0x10000 ? BMP_CHANGES.get(cp) : UCharacter.toLowerCase(cp) != cp) {
                if (out == null) {
                    out = new StringBuilder(n + 16).append(text, 0, i);
                }
                if (cp < 0x80) {
                    out.append((char) (cp + ('a' - 'A')));
                } else if (cp == CAPITAL_SIGMA) {
                    out.append(isFinalSigma(text, i, next) ? FINAL_SIGMA : SMALL_SIGMA);
                } else {
                    out.append(UCharacter.toLowerCase(ULocale.ROOT, text.substring(i, next)));
                }
            } else if (out != null) {
                out.append(text, i, next);
            }
            i = next;
        }
        return out == null ? text : out.toString();
    }

    /**
     * The Final_Sigma context of the sigma at {@code [start, end)}: a cased character before it and none after
     * it, case-ignorable characters in between skipped on both sides.
     */
    private static boolean isFinalSigma(String text, int start, int end) {
        boolean casedBefore = false;
        for (int j = start; j > 0; ) {
            int cp = text.codePointBefore(j);
            if (!isCaseIgnorable(cp)) {
                casedBefore = isCased(cp);
                break;
            }
            j -= Character.charCount(cp);
        }
        if (!casedBefore) {
            return false;
        }
        for (int j = end; j < text.length(); ) {
            int cp = text.codePointAt(j);
            if (!isCaseIgnorable(cp)) {
                return !isCased(cp);
            }
            j += Character.charCount(cp);
        }
        return true;
    }

    private static boolean isCased(int cp) {
        return UCharacter.hasBinaryProperty(cp, UProperty.CASED);
    }

    private static boolean isCaseIgnorable(int cp) {
        return UCharacter.hasBinaryProperty(cp, UProperty.CASE_IGNORABLE);
    }
}
