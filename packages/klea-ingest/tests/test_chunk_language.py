"""The language of each chunk: a stdlib detector from scripts and function words."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from klea_utils.stores._ingest.chunking.language import (
    LANGUAGES,
    UNDETERMINED,
    detect_language,
)

SENTENCES = [
    ("zh", "本文提出一种新的深度学习方法，用于医学图像分割，并在三个数据集上进行了评估。"),
    ("zh", "我們還討論了模型的計算成本和未來的研究方向。"),
    ("ja", "東京大学の研究者たちは、新しい画像認識の手法を開発した。"),
    ("ja", "カタカナだけのテキストです"),
    ("ko", "이 연구는 의료 영상 분할을 위한 새로운 딥러닝 방법을 제안한다."),
    ("fa", "این پژوهش روش تازه‌ای برای یادگیری ماشین در پزشکی ارائه می‌دهد."),
    ("ar", "قدمت هذه الدراسة طريقة جديدة للتعلم الآلي في تحليل الصور الطبية."),
    ("ur", "یہ تحقیق مشین لرننگ کے لیے ایک نیا طریقہ پیش کرتی ہے اور بڑے ڈیٹا پر چلتی ہے۔"),
    ("ru", "В этой статье предложен новый метод сегментации медицинских изображений."),
    ("uk", "У цій статті запропоновано новий метод, і він працює з їхніми даними."),
    ("he", "במאמר זה אנו מציעים שיטה חדשה לפילוח תמונות רפואיות."),
    ("el", "Σε αυτή την εργασία προτείνουμε μια νέα μέθοδο κατάτμησης εικόνων."),
    ("th", "งานวิจัยนี้เสนอวิธีการใหม่สำหรับการแบ่งส่วนภาพทางการแพทย์"),
    ("hi", "यह शोध चिकित्सा छवियों के विभाजन के लिए एक नई विधि प्रस्तुत करता है।"),
    (
        "en",
        "We propose a new method for the segmentation of medical images and show that it works.",
    ),
    ("fr", "Nous proposons une nouvelle méthode pour la segmentation des images médicales."),
    (
        "de",
        "Wir stellen eine neue Methode für die Segmentierung vor, die nicht langsam ist.",
    ),
    ("es", "Proponemos un nuevo método para la segmentación de las imágenes médicas."),
    ("it", "Proponiamo un nuovo metodo per la segmentazione delle immagini che non è lento."),
    ("pt", "Propomos um novo método para a segmentação das imagens médicas que não é lento."),
    (
        "nl",
        "Wij stellen een nieuwe methode voor de segmentatie van het beeld voor die niet traag is.",
    ),
    ("zh", "深度学习（Deep Learning）方法在图像分割中的应用研究综述与展望"),
    ("en", "Deep learning (深度学习) for the segmentation of images: a review of the field."),
    (UNDETERMINED, "x = 3"),
    (UNDETERMINED, "Table 3 12.5 17.2 19.0"),
]


@pytest.mark.parametrize(("language", "text"), SENTENCES)
def test_real_sentences_get_their_language(language: str, text: str) -> None:
    assert detect_language(text) == language


@given(st.text(max_size=200))
def test_any_text_gets_a_known_code(text: str) -> None:
    assert detect_language(text) in LANGUAGES


@given(
    st.sampled_from([text for _, text in SENTENCES]),
    st.text(alphabet="0123456789 .,;()-", max_size=40),
)
def test_digits_and_punctuation_do_not_change_the_language(text: str, noise: str) -> None:
    assert detect_language(text + noise) == detect_language(text)
