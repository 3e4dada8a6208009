package io.neardup.text;

/**
 * Ideographic description sequences (IDS) as OpenCC 1.4 delimits them ({@code UTF8Util}'s
 * {@code NextIdeographicDescriptionSequenceLength}): where no dictionary key matches and the text starts
 * with a description operator (U+2FF0..U+2FFF), OpenCC copies the whole sequence unconverted, so
 * {@code ⿰說話說話} becomes {@code ⿰說話说话}. The port must delimit sequences exactly alike.
 *
 * <p>An operator takes one to three operands; an operand is any single code point that is not an operator,
 * or a nested sequence. OpenCC gives up (and copies only the operator) when the text ends before the
 * sequence is complete, when nesting reaches {@value #MAX_DEPTH} levels, or when the sequence would
 * exceed {@value #MAX_CODE_POINTS} code points.
 */
final class IdeographicDescription {
    private IdeographicDescription() {}

    /** OpenCC's {@code kMaxIDSDepth}. */
    static final int MAX_DEPTH = 16;
    /** OpenCC's {@code kMaxIDSCodePoints}. */
    static final int MAX_CODE_POINTS = 64;
    /** The operator block, OpenCC's {@code kFirst/kLastIdeographicDescriptionOperator}. */
    static final int FIRST_OPERATOR = 0x2FF0;
    static final int LAST_OPERATOR = 0x2FFF;

    private static final int INCOMPLETE = -1;

    /** How many operands the operator {@code cp} takes, 0 when {@code cp} is no operator. */
    static int arity(int cp) {
        return switch (cp) {
            case 0x2FF2, 0x2FF3 -> 3;
            case 0x2FFE, 0x2FFF -> 1;
            case 0x2FF0, 0x2FF1, 0x2FF4, 0x2FF5, 0x2FF6, 0x2FF7, 0x2FF8, 0x2FF9, 0x2FFA, 0x2FFB, 0x2FFC, 0x2FFD -> 2;
            default -> 0;
        };
    }

    /** The chars of the complete sequence starting at {@code start}, or 0 when none starts there. */
    static int sequenceLength(CharSequence text, int start) {
        if (start >= text.length() || arity(Character.codePointAt(text, start)) == 0) {
            return 0;
        }
        int length = new Parser(text).consume(start, MAX_DEPTH);
        return Math.max(length, 0);
    }

    /** One parse: counts the code points consumed so far, like OpenCC's {@code codePoints} out-parameter. */
    private static final class Parser {
        private final CharSequence text;
        private int codePoints;

        private Parser(CharSequence text) {
            this.text = text;
        }

        /** The chars of the (sub)sequence at {@code at}, or {@link #INCOMPLETE} when it cannot be completed. */
        private int consume(int at, int depthLeft) {
            if (at >= text.length() || depthLeft == 0 || codePoints >= MAX_CODE_POINTS) {
                return INCOMPLETE;
            }
            int cp = Character.codePointAt(text, at);
            codePoints++;
            int operands = arity(cp);
            int offset = at + Character.charCount(cp);
            for (int i = 0; i < operands; i++) {
                int operand = consume(offset, depthLeft - 1);
                if (operand == INCOMPLETE) {
                    return INCOMPLETE;
                }
                offset += operand;
            }
            return offset - at;
        }
    }
}
