package io.neardup.text;

import com.ibm.icu.lang.UCharacter;
import com.ibm.icu.lang.UCharacterCategory;
import com.ibm.icu.lang.UCharacterDirection;
import com.ibm.icu.lang.UProperty;

/**
 * Python's character predicates, by code point, over ICU4J 70 (Unicode 14.0, the tables of Python 3.11's
 * {@code unicodedata}). Java's own {@code Character} follows the JDK's Unicode version and its own notion of
 * whitespace, so the port never uses it where Python's answer shapes a fingerprint.
 */
public final class PyChars {
    private PyChars() {}

    private static final String[] CATEGORY = new String[32];

    static {
        CATEGORY[UCharacterCategory.UNASSIGNED] = "Cn";
        CATEGORY[UCharacterCategory.UPPERCASE_LETTER] = "Lu";
        CATEGORY[UCharacterCategory.LOWERCASE_LETTER] = "Ll";
        CATEGORY[UCharacterCategory.TITLECASE_LETTER] = "Lt";
        CATEGORY[UCharacterCategory.MODIFIER_LETTER] = "Lm";
        CATEGORY[UCharacterCategory.OTHER_LETTER] = "Lo";
        CATEGORY[UCharacterCategory.NON_SPACING_MARK] = "Mn";
        CATEGORY[UCharacterCategory.ENCLOSING_MARK] = "Me";
        CATEGORY[UCharacterCategory.COMBINING_SPACING_MARK] = "Mc";
        CATEGORY[UCharacterCategory.DECIMAL_DIGIT_NUMBER] = "Nd";
        CATEGORY[UCharacterCategory.LETTER_NUMBER] = "Nl";
        CATEGORY[UCharacterCategory.OTHER_NUMBER] = "No";
        CATEGORY[UCharacterCategory.SPACE_SEPARATOR] = "Zs";
        CATEGORY[UCharacterCategory.LINE_SEPARATOR] = "Zl";
        CATEGORY[UCharacterCategory.PARAGRAPH_SEPARATOR] = "Zp";
        CATEGORY[UCharacterCategory.CONTROL] = "Cc";
        CATEGORY[UCharacterCategory.FORMAT] = "Cf";
        CATEGORY[UCharacterCategory.PRIVATE_USE] = "Co";
        CATEGORY[UCharacterCategory.SURROGATE] = "Cs";
        CATEGORY[UCharacterCategory.DASH_PUNCTUATION] = "Pd";
        CATEGORY[UCharacterCategory.START_PUNCTUATION] = "Ps";
        CATEGORY[UCharacterCategory.END_PUNCTUATION] = "Pe";
        CATEGORY[UCharacterCategory.CONNECTOR_PUNCTUATION] = "Pc";
        CATEGORY[UCharacterCategory.OTHER_PUNCTUATION] = "Po";
        CATEGORY[UCharacterCategory.MATH_SYMBOL] = "Sm";
        CATEGORY[UCharacterCategory.CURRENCY_SYMBOL] = "Sc";
        CATEGORY[UCharacterCategory.MODIFIER_SYMBOL] = "Sk";
        CATEGORY[UCharacterCategory.OTHER_SYMBOL] = "So";
        CATEGORY[UCharacterCategory.INITIAL_PUNCTUATION] = "Pi";
        CATEGORY[UCharacterCategory.FINAL_PUNCTUATION] = "Pf";
    }

    private static final byte SPACE = 1;
    private static final byte ALNUM = 2;
    /**
     * {@link #isSpace} and {@link #isAlnum} of every BMP code point, worked out once from the same ICU
     * properties: the pipeline asks them of every character of every text.
     */
    private static final byte[] BMP = new byte[0x10000];

    static {
        for (int cp = 0; cp < BMP.length; cp++) {
            BMP[cp] = (byte) ((spaceProperty(cp) ? SPACE : 0) | (alnumProperty(cp) ? ALNUM : 0));
        }
    }

    /** {@code unicodedata.category(chr(cp))}. */
    public static String category(int cp) {
        return CATEGORY[UCharacter.getType(cp)];
    }

    /** {@code chr(cp).isspace()}: bidirectional class WS, B or S, or category Zs. */
    public static boolean isSpace(int cp) {
        return cp < BMP.length ? (BMP[cp] & SPACE) != 0 : spaceProperty(cp);
    }

    private static boolean spaceProperty(int cp) {
        int dir = UCharacter.getDirection(cp);
        return dir == UCharacterDirection.WHITE_SPACE_NEUTRAL
            || dir == UCharacterDirection.BLOCK_SEPARATOR
            || dir == UCharacterDirection.SEGMENT_SEPARATOR
            || UCharacter.getType(cp) == UCharacterCategory.SPACE_SEPARATOR;
    }

    /** {@code chr(cp).isalnum()}: a letter (L*), or a character with any numeric type (decimal, digit, numeric). */
    public static boolean isAlnum(int cp) {
        return cp < BMP.length ? (BMP[cp] & ALNUM) != 0 : alnumProperty(cp);
    }

    private static boolean alnumProperty(int cp) {
        int type = UCharacter.getType(cp);
        return switch (type) {
            case UCharacterCategory.UPPERCASE_LETTER, UCharacterCategory.LOWERCASE_LETTER,
                UCharacterCategory.TITLECASE_LETTER, UCharacterCategory.MODIFIER_LETTER,
                UCharacterCategory.OTHER_LETTER -> true;
            default -> UCharacter.getIntPropertyValue(cp, UProperty.NUMERIC_TYPE) != UCharacter.NumericType.NONE;
        };
    }

    /** A character {@code \\w} matches in a Python {@code str} pattern: alphanumeric or the underscore. */
    public static boolean isWord(int cp) {
        return cp == '_' || isAlnum(cp);
    }
}
