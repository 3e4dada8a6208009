package io.neardup.parity;

import io.neardup.text.T2S;

/**
 * Answers every line with {@code T2S.shared().convert(text)} as a JSON string, or {@code null} where the
 * port refuses the text (a lone surrogate), as Python's {@code OpenCC("t2s").convert} raises there.
 */
public final class T2SParity {
    private T2SParity() {}

    public static void main(String[] args) {
        T2S t2s = T2S.shared();
        Lines.serve(text -> {
            try {
                return Lines.encode(t2s.convert(text));
            } catch (IllegalArgumentException refused) {
                return "null";
            }
        });
    }
}
